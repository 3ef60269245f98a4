"""REST API under /api/ (contract: docs/architecture.md §6; document: /api/openapi.json)."""
