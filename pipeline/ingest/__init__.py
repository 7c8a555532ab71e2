"""The run side: plan an import, execute it (extract, transform, load, publish), report
its progress and stop it on a signal."""
