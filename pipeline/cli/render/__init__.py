"""How the CLI shows results to people: rich tables under shared column policies
(:mod:`.tables`), one module per command group. JSON documents come from the results'
own ``to_json()``; nothing here is used for them."""
