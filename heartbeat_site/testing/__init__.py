"""Test support shared by tests/ and bench/: Redis for tests, live server processes."""
