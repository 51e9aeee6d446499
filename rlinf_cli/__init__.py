"""The ``rlinf-bench`` command line: one module per subcommand, registered in main.COMMAND_MODULES."""
