"""REST API under /api/ (contract: ARCHITECTURE.md "Web"; document: /api/openapi.json)."""
