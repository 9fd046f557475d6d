"""Database access: engines, sessions, the migration runtime."""
