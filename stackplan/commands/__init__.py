"""The commands of ``python -m stackplan``: each takes the parsed arguments, builds its typed report document
(`stackplan.reportdoc`) through the pipeline (`stackplan.pipeline`), writes it in the asked format (the registry,
`stackplan.formats`) and returns its exit code (`stackplan.exits`). The CLI module only parses and dispatches."""
