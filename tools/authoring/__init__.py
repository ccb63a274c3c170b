"""Scripts that write the hand-authored cassettes under cassettes/ (see README.md here)."""
