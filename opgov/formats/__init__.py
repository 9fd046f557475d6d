"""Readers and writers of files, with file:line on every error."""
