"""What every Transport with the same settings shares: the pool, its admission, the adaptive
window and the pacer (docs/internals.md)."""
