"""The `winsuite` subcommands, one module each, every one exposing `register(subparsers)`."""
