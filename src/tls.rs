//! The program's one TLS crypto back end (issue 23): rustls with ring, for object_store's
//! HTTP client (`svcdir publish`) and `svcdir build --previous URL` alike. reqwest is built
//! without a provider of its own (`rustls-no-provider`, which would otherwise pull in
//! aws-lc-rs, a CMake C build), so the process-wide default must be installed before the
//! first client is built; every place that builds one calls [`install_crypto_provider`].

/// Installs ring as rustls' process-wide crypto provider, once; later calls (and a provider
/// installed by someone else first) leave it as it is.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when a provider is already installed: that one is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_builds_after_the_provider_is_installed() {
        super::install_crypto_provider();
        super::install_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        reqwest::Client::builder().build().expect("a reqwest client with the ring provider");
    }
}
