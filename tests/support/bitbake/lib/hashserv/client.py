"""rtbuild test support: imported by bb.siggen; unused because BB_HASHSERVE is never set."""
