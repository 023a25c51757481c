//! Do the repositories kas will clone answer? A local `file://` repository must exist; a
//! network one must accept a TCP connection on its port (https 443, http 80, git 9418, ssh 22).
//! Skipped when `KAS_PREMIRRORS` sends kas to mirrors instead.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::Check;
use crate::files::limits::KAS_FILE_LIMIT;

/// How long one repository host may take to answer.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(4);

/// At most this many repositories are probed at once (a kas file may list thousands).
const WORKERS: usize = 16;

/// At most this many unreachable repositories are named; the rest are counted.
const NAMED: usize = 20;

/// The repository URLs of a build: meta-qcom's own, then, once kas has cloned meta-qcom into
/// `work`, every `repos: <name>: url:` of the kas files the build includes (`files`, followed
/// through their `header: includes:`).
pub(crate) fn urls(meta_qcom_url: &str, work: &Path, files: &[&str]) -> Vec<String> {
    let mut urls = vec![meta_qcom_url.to_string()];
    let repo = work.join("meta-qcom");
    let mut queue: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    let mut seen: Vec<String> = Vec::new();
    while let Some(file) = queue.pop() {
        if seen.contains(&file) || seen.len() > 64 {
            continue;
        }
        seen.push(file.clone());
        // A kas file is a few KB: a FIFO, a device or a huge file is skipped, never read.
        let Ok(text) = crate::files::input::read_to_string(&repo.join(&file), KAS_FILE_LIMIT)
        else {
            continue;
        };
        let Ok(yaml) = crate::text::yaml::from_str::<serde_yaml::Value>(&text) else { continue };
        if let Some(includes) = yaml.get("header").and_then(|h| h.get("includes")) {
            for include in includes.as_sequence().into_iter().flatten() {
                if let Some(path) = include.as_str() {
                    queue.push(path.to_string());
                }
            }
        }
        if let Some(repos) = yaml.get("repos").and_then(|r| r.as_mapping()) {
            for spec in repos.values() {
                if let Some(url) = spec.get("url").and_then(|u| u.as_str())
                    && !urls.iter().any(|u| u == url)
                {
                    urls.push(url.to_string());
                }
            }
        }
    }
    urls
}

/// Where a URL is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Local(PathBuf),
    Remote { host: String, port: u16 },
}

/// `https://h/x`, `http://h:8080/x`, `git://h/x`, `ssh://u@h:2222/x`, `u@h:x`, `file:///p`.
pub(crate) fn endpoint(url: &str) -> Option<Endpoint> {
    if let Some(path) = url.strip_prefix("file://") {
        return Some(Endpoint::Local(PathBuf::from(path)));
    }
    if url.starts_with('/') {
        return Some(Endpoint::Local(PathBuf::from(url)));
    }
    let (rest, default_port) = if let Some(rest) = url.strip_prefix("https://") {
        (rest, 443)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (rest, 80)
    } else if let Some(rest) = url.strip_prefix("git://") {
        (rest, 9418)
    } else if let Some(rest) = url.strip_prefix("ssh://") {
        (rest, 22)
    } else if url.contains('@') && url.contains(':') && !url.contains("://") {
        // scp-like: user@host:path
        let host = url.split_once('@')?.1.split_once(':')?.0;
        return Some(Endpoint::Remote { host: host.to_string(), port: 22 });
    } else {
        return None;
    };
    let authority = rest.split('/').next()?;
    let authority = authority.rsplit_once('@').map(|(_, h)| h).unwrap_or(authority);
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            (host, port.parse().ok()?)
        }
        _ => (authority, default_port),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| Endpoint::Remote { host: host.to_string(), port })
}

/// Why `url` cannot be reached, or `None` when it answered.
fn probe(url: &str) -> Option<String> {
    match endpoint(url) {
        None => Some(format!("{url}: not a URL kas can clone")),
        Some(Endpoint::Local(path)) => {
            (!path.exists()).then(|| format!("{url}: {} does not exist", path.display()))
        }
        Some(Endpoint::Remote { host, port }) => {
            let addrs = match (host.as_str(), port).to_socket_addrs() {
                Ok(addrs) => addrs.collect::<Vec<_>>(),
                Err(err) => return Some(format!("{url}: cannot resolve {host} ({err})")),
            };
            let mut last = None;
            for addr in addrs {
                match TcpStream::connect_timeout(&addr, TIMEOUT) {
                    Ok(_) => return None,
                    Err(err) => last = Some(err),
                }
            }
            Some(format!(
                "{url}: {host}:{port} does not answer ({})",
                last.map(|e| e.to_string()).unwrap_or_else(|| "no address".into())
            ))
        }
    }
}

/// The `repos` check: every URL probed at once, none waited on longer than [`TIMEOUT`].
pub(crate) fn check(urls: &[String], kas_premirrors: Option<&str>) -> Check {
    if let Some(mirrors) = kas_premirrors {
        let first = mirrors.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        return Check::ok(
            "repos",
            format!("KAS_PREMIRRORS ({first} …) covers the repositories; not probed"),
        );
    }
    // A fixed pool of workers takes the URLs in turn and stops at the deadline: thousands of
    // URLs never mean thousands of threads.
    let deadline = Instant::now() + TIMEOUT + Duration::from_millis(500);
    let shared: Arc<Vec<String>> = Arc::new(urls.to_vec());
    let next = Arc::new(AtomicUsize::new(0));
    let (send, receive) = mpsc::channel();
    for _ in 0..WORKERS.min(urls.len()) {
        let (send, shared, next) = (send.clone(), Arc::clone(&shared), Arc::clone(&next));
        let worker = move || {
            while Instant::now() < deadline {
                let Some(url) = shared.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                if send.send((url.clone(), probe(url))).is_err() {
                    break;
                }
            }
        };
        // A thread the system refuses leaves its URLs to the others (or unanswered).
        if std::thread::Builder::new().name("rtbuild-probe".into()).spawn(worker).is_err() {
            break;
        }
    }
    drop(send);
    let mut answered: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut failures: Vec<String> = Vec::new();
    while answered.len() < urls.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        match receive.recv_timeout(left) {
            Ok((url, result)) => {
                answered.insert(url);
                failures.extend(result);
            }
            Err(_) => break,
        }
    }
    for url in urls.iter().filter(|u| !answered.contains(*u)) {
        failures.push(format!("{url}: no answer within {} s", TIMEOUT.as_secs()));
    }
    failures.sort();
    if failures.is_empty() {
        let answer = if urls.len() == 1 { "answers" } else { "answer" };
        let repos = crate::text::counted(urls.len(), "repository");
        return Check::ok("repos", format!("{repos} {answer}"));
    }
    Check::problem(
        "repos",
        format!("repositories kas must clone cannot be reached: {}", named(&failures)),
        "check the network and proxy (https_proxy), or point kas at mirrors with \
         KAS_PREMIRRORS (and --meta-qcom-url)",
    )
}

/// The first [`NAMED`] failures, then how many more there are.
fn named(failures: &[String]) -> String {
    let mut text = failures.iter().take(NAMED).cloned().collect::<Vec<_>>().join("; ");
    if failures.len() > NAMED {
        text.push_str(&format!("; and {} more", failures.len() - NAMED));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_of_each_url_form() {
        let remote = |host: &str, port| Some(Endpoint::Remote { host: host.into(), port });
        assert_eq!(
            endpoint("https://github.com/qualcomm-linux/meta-qcom"),
            remote("github.com", 443)
        );
        assert_eq!(endpoint("http://mirror.lan:8080/x.git"), remote("mirror.lan", 8080));
        assert_eq!(endpoint("git://git.yoctoproject.org/x"), remote("git.yoctoproject.org", 9418));
        assert_eq!(endpoint("ssh://me@git.lan:2222/x"), remote("git.lan", 2222));
        assert_eq!(endpoint("git@github.com:org/x.git"), remote("github.com", 22));
        assert_eq!(endpoint("file:///srv/x"), Some(Endpoint::Local("/srv/x".into())));
        assert_eq!(endpoint("ftp://x"), None);
    }

    #[test]
    fn a_missing_local_repository_is_named_and_mirrors_skip_the_probe() {
        let dir = tempfile::tempdir().unwrap();
        let here = format!("file://{}", dir.path().display());
        let gone = format!("file://{}/gone", dir.path().display());
        let check = check(&[here.clone(), gone.clone()], None);
        assert_eq!(check.status, super::super::Severity::Problem);
        assert!(
            check
                .message
                .contains(&format!("{gone}: {}/gone does not exist", dir.path().display())),
            "{}",
            check.message
        );
        assert!(!check.message.contains(&format!("{here}:")), "{}", check.message);
        let covered = super::check(&[gone], Some("https://github.com/.* file:///mirror/"));
        assert_eq!(covered.status, super::super::Severity::Ok);
    }

    #[test]
    fn included_kas_files_add_their_repositories() {
        let dir = tempfile::tempdir().unwrap();
        let ci = dir.path().join("meta-qcom/ci");
        std::fs::create_dir_all(&ci).unwrap();
        crate::files::write::fixture(
            ci.join("m.yml"),
            "header:\n  version: 14\n  includes:\n    - ci/base.yml\n",
        )
        .unwrap();
        crate::files::write::fixture(
            ci.join("base.yml"),
            "repos:\n  meta-qcom:\n  oe-core:\n    url: https://github.com/openembedded/openembedded-core\n",
        )
        .unwrap();
        assert_eq!(
            urls("file:///mq", dir.path(), &["ci/m.yml"]),
            ["file:///mq", "https://github.com/openembedded/openembedded-core"]
        );
    }
}
