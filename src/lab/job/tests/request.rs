//! The request's checks: bundle URLs, and the ceiling on a job's length.

use super::*;

#[test]
fn bundle_urls() {
    let ok = BundleUrl::parse("https://h.example/x/rt-bundle.tar.zst?sig=a%2Fb").unwrap();
    assert_eq!(ok.file, "rt-bundle.tar.zst");
    let gz = BundleUrl::parse("http://h:8080/core-image-base-iq-9075-evk.rootfs.qcomflash.tar.gz")
        .unwrap();
    assert_eq!(gz.file, "core-image-base-iq-9075-evk.rootfs.qcomflash.tar.gz");
    for (bad, why) in [
        ("rt.tar.zst", "not an http"),
        ("ftp://h/rt.tar.zst", "not an http"),
        ("https://h/rt.zip", "not a .tar.zst"),
        ("https://h/a b.tar.zst", "white space"),
        ("https://h/$(reboot).tar.zst", "percent-encode"),
        ("https://h/'x'.tar.zst", "percent-encode"),
        ("https:///x.tar.zst", "no host"),
        ("https://h/.tar.zst", "no file"),
    ] {
        let err = BundleUrl::parse(bad).unwrap_err().to_string();
        assert!(err.contains(why), "{bad}: {err}");
    }
}

#[test]
fn timeouts_grow_with_the_duration_and_have_a_ceiling() {
    let mut req = request();
    req.measurement.span = Span::parse("24h").unwrap();
    req.measurement.duration_text = "24h".into();
    assert!(render(&req).unwrap().contains("timeouts:\n  job:\n    minutes: 2951\n"));
    req.measurement.scenarios =
        vec![Scenario::Idle, Scenario::Stress, Scenario::Full, Scenario::StressIsolated];
    req.measurement.span = Span::parse("2d").unwrap();
    req.measurement.duration_text = "2d".into();
    assert_eq!(
        render(&req).unwrap_err().to_string(),
        "4 scenarios of --duration 2d make a LAVA job of 194 h, longer than the 168 h one \
         job may hold a board; pass a shorter --duration, fewer --tests or fewer --scenario per job"
    );
}
