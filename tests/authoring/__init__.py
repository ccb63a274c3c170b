"""Scripts that write the hand-authored cassettes (request bodies written out per test)."""
