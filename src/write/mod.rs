//! Writing a generated [`Tree`] to disk: atomic, idempotent, and refusing to overwrite hand edits.
