"""What users do to their catalog: hide, restore, purge, tag and relocate sessions and
sources, every operation authorized against one workspace and recorded in the audit."""
