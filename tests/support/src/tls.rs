//! A certificate for HTTPS on 127.0.0.1, made by the `openssl` command (installed by
//! `.ci/run`): a CA, and a server certificate it signs for `IP:127.0.0.1`, so that rustls
//! accepts it once the CA is trusted (moto's own ad-hoc certificate names no IP address).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files of a test certificate, in a temporary directory removed on drop.
#[derive(Debug)]
pub struct TestCertificate {
    _dir: tempfile::TempDir,
    /// The CA certificate (PEM): what a client trusts (`SSL_CERT_FILE`).
    pub ca: PathBuf,
    /// The server certificate (PEM) for `IP:127.0.0.1`, signed by the CA.
    pub cert: PathBuf,
    /// The server's private key (PEM, unencrypted).
    pub key: PathBuf,
}

impl TestCertificate {
    /// Makes one; `None` (after saying so) when `openssl` is not installed.
    pub fn for_loopback() -> Option<TestCertificate> {
        if Command::new("openssl").arg("version").output().is_err() {
            svcdir::test_support::skipped("openssl is not installed (.ci/run installs it)");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let at = |name: &str| dir.path().join(name);
        let (ca, ca_key, cert, key, csr, ext) =
            (at("ca.pem"), at("ca.key"), at("cert.pem"), at("key.pem"), at("cert.csr"), at("cert.ext"));
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=svcdir test CA",
            "-keyout",
            s(&ca_key),
            "-out",
            s(&ca),
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            s(&key),
            "-out",
            s(&csr),
        ]);
        std::fs::write(&ext, "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\n").expect("write");
        openssl(&[
            "x509",
            "-req",
            "-in",
            s(&csr),
            "-CA",
            s(&ca),
            "-CAkey",
            s(&ca_key),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            s(&ext),
            "-out",
            s(&cert),
        ]);
        Some(TestCertificate { _dir: dir, ca, cert, key })
    }
}

fn s(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

fn openssl(args: &[&str]) {
    let output = Command::new("openssl").args(args).output().expect("openssl runs");
    assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}
