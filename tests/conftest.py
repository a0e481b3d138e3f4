"""Shared test configuration: the asyncop test kit's fixtures are loaded as a plugin."""
