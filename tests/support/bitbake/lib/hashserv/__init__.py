"""rtbuild test support: the parts of BitBake's hash-equivalence client that bb.siggen needs.

The tests run no hash-equivalence server; any attempt to use one fails with a clear message.
"""
import re

_UNIHASH = re.compile(r"^[0-9a-fA-F]{1,128}$")


def is_valid_unihash(value):
    return bool(value) and bool(_UNIHASH.match(value))


def _unsupported(*_args, **_kwargs):
    raise RuntimeError("rtbuild test BitBake has no hash-equivalence server (BB_HASHSERVE must be unset)")


create_server = _unsupported
create_client = _unsupported
create_async_client = _unsupported
