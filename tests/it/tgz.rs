// Included by the Helm tests of the library (`src/model/helm/tests.rs`) and of the CLI
// (`tests/it/helm_charts.rs`): one `.tgz` builder for both.

/// A `.tgz` chart archive of `entries` (paths include the top folder, as `helm package`
/// writes them).
fn tgz(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        // Written raw: `set_path` refuses the hostile names some tests need.
        header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, *bytes).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}
