"""rtbuild test support: stand-in package for BitBake's PR service."""
