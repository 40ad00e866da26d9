//! Precompressed variants of the output (`--precompress`): `.gz` and `.br` beside each JSON
//! and HTML file, for nginx's `gzip_static` and for CDNs that serve stored encodings.
//!
//! Both encoders are deterministic (the gzip header carries no time or name), so a variant
//! is as stable as the file it encodes and incremental publishing treats it like any file.

use std::io::Write;

/// Files smaller than this are sent as they are (nginx's `gzip_min_length` in the
/// generated configuration is the same).
pub const MIN_LEN: usize = 256;

/// An encoder: the file's bytes in, the variant's bytes out.
pub(crate) type Encoder = fn(&[u8]) -> std::io::Result<Vec<u8>>;

/// The variants: file-name suffix and encoder.
pub(crate) const ENCODINGS: [(&str, Encoder); 2] = [(".gz", gzip), (".br", brotli)];

/// Whether a file gets precompressed variants.
pub fn worth_it(path: &str, len: usize) -> bool {
    len >= MIN_LEN && (path.ends_with(".json") || path.ends_with(".html"))
}

/// gzip at level 9: paid once per changed file, saved on every response.
pub fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::GzBuilder::new().write(Vec::with_capacity(bytes.len() / 4), flate2::Compression::best());
    encoder.write_all(bytes)?;
    encoder.finish()
}

/// Brotli at quality 9 with a 4 MiB window: most of quality 11's gain at a fraction of its
/// time.
pub fn brotli(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() / 4);
    {
        let mut encoder = brotli::CompressorWriter::new(&mut out, 64 * 1024, 9, 22);
        encoder.write_all(bytes)?;
        encoder.flush()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn variants_decode_to_the_original_and_are_deterministic() {
        let text = r#"{"data":[{"name":"Café Còmhla","description":"Tea & talk\r\nevery week"}]}"#.repeat(40);
        let gz = gzip(text.as_bytes()).unwrap();
        let mut back = String::new();
        flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut back).unwrap();
        assert_eq!(back, text);
        assert_eq!(gz, gzip(text.as_bytes()).unwrap());
        let br = brotli(text.as_bytes()).unwrap();
        let mut back = Vec::new();
        brotli::Decompressor::new(&br[..], 4096).read_to_end(&mut back).unwrap();
        assert_eq!(back, text.as_bytes());
        assert_eq!(br, brotli(text.as_bytes()).unwrap());
        assert!(gz.len() < text.len() / 4 && br.len() < gz.len());
    }

    #[test]
    fn only_json_and_html_of_some_size() {
        assert!(worth_it("api/v4/categories/index.json", 300));
        assert!(worth_it("api/v4/categories/index.html", 300));
        assert!(!worth_it("api/v4/categories/index.json", 100));
        assert!(!worth_it("_manifest.txt", 10_000));
    }
}
