"""What every stage shares: the project's error types and names on disk."""
