"""rtbuild test support: the PR-service entry points bb.cooker calls."""


class PRServiceConfigError(Exception):
    pass


def auto_start(d):
    if (d.getVar("PRSERV_HOST") or "").strip():
        raise PRServiceConfigError("rtbuild test BitBake has no PR server (PRSERV_HOST must be unset)")
    return None


def auto_shutdown():
    return None
