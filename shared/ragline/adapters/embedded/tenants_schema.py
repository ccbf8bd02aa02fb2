"""The embedded tenant registry's tables, and the touch both it and the authorizer's key lookup run."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS namespaces (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id)
);
CREATE TABLE IF NOT EXISTS tenants (
    tenant_id TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    key_hash TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    body TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT,
    UNIQUE (tenant_id, key_id)  -- its index also serves every per-tenant lookup of keys
);
CREATE TABLE IF NOT EXISTS identity_providers (
    tenant_id TEXT PRIMARY KEY,
    issuer TEXT NOT NULL UNIQUE,  -- an issuer belongs to one tenant: a token finds its tenant by it
    body TEXT NOT NULL            -- IdentityProvider.to_json()
);
"""

FIND_IDENTITY_PROVIDER = "SELECT tenant_id, body FROM identity_providers WHERE issuer=?"

TOUCH_KEY = (
    "UPDATE api_keys SET last_used_at=? WHERE key_hash=? AND (last_used_at IS NULL OR last_used_at < ?)"
)
"""Parameters: the time (``timestamp``), the key hash, the cutoff (``touch_cutoff``): at most one write
per :data:`~ragline.domain.keys.TOUCH_INTERVAL`."""
