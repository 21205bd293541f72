//! Reading an export's `.zip`: its conversations files, within the decompression limits.

use super::Format;
use super::progress::Progress;
use super::scan::scan;
use super::{Element, Limits, is_conversations_file};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufReader, Read};

pub(super) fn read_zip(
    format: Format,
    file: File,
    shown: &str,
    limits: Limits,
    progress: &mut Progress,
    each: &mut dyn FnMut(Element) -> Result<u64>,
) -> Result<()> {
    let bad = |e: zip::result::ZipError| {
        Error::invalid(format!(
            "invalid argument --input: {shown} cannot be read as a zip archive ({e}); nothing was imported"
        ))
    };
    let mut archive = zip::ZipArchive::new(file).map_err(bad)?;
    let mut entries: Vec<(String, usize, u64)> = Vec::new();
    // Where each entry's local header starts and how much compressed data follows it.
    let mut spans: Vec<(u64, u64, String)> = Vec::new();
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(bad)?;
        let name = entry.name().map_err(bad)?.into_owned();
        spans.push((entry.header_start(), entry.compressed_size(), name.clone()));
        let base = name.rsplit('/').next().unwrap_or_default();
        if !entry.is_dir() && !name.starts_with("__MACOSX/") && is_conversations_file(base) {
            entries.push((name, i, entry.size()));
        }
    }
    entries.sort();
    refuse_overlaps(&mut spans, shown)?;
    if entries.is_empty() {
        return Err(Error::invalid(format!(
            "invalid argument --input: the zip archive {shown} holds no conversations.json (nor conversations-000.json, ...); is it a ChatGPT or Claude.ai data export?"
        )));
    }
    progress.total = entries.iter().map(|e| e.2).sum();
    let mut total = 0u64;
    for (name, i, _) in entries {
        let entry = archive.by_index(i).map_err(bad)?;
        let label = format!("{shown}:{name}");
        let capped = Capped {
            ratio_limit: entry
                .compressed_size()
                .max(1)
                .saturating_mul(limits.zip_ratio),
            inner: entry,
            read: 0,
            total: &mut total,
            limits,
        };
        scan(
            format,
            BufReader::with_capacity(1 << 16, capped),
            &label,
            progress,
            each,
        )?;
    }
    Ok(())
}

/// Refuse entries whose data overlap: a zip bomb points many entries at one compressed stream. Each
/// entry's data follows its local header (30 bytes and more) before the next entry starts.
fn refuse_overlaps(spans: &mut [(u64, u64, String)], shown: &str) -> Result<()> {
    spans.sort();
    for pair in spans.windows(2) {
        let ((start, size, first), (next, _, second)) = (&pair[0], &pair[1]);
        if start.saturating_add(30).saturating_add(*size) > *next {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is not a well-formed zip archive: its entries {first:?} and {second:?} overlap (they share compressed data, as zip bombs do); nothing was imported"
            )));
        }
    }
    Ok(())
}

/// A zip entry read within [`Limits`]: reading fails once the entry decompresses to more than its
/// ratio allows, or the archive's conversations files to more than their total.
struct Capped<'a, R> {
    inner: R,
    read: u64,
    ratio_limit: u64,
    total: &'a mut u64,
    limits: Limits,
}

impl<R: Read> Read for Capped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        *self.total += n as u64;
        if self.read > self.ratio_limit {
            return Err(std::io::Error::other(format!(
                "an entry decompresses to more than {} times its compressed size, as zip bombs do; if the archive is genuine, raise the limit with --max-zip-ratio",
                self.limits.zip_ratio
            )));
        }
        if *self.total > self.limits.unzipped_bytes {
            return Err(std::io::Error::other(format!(
                "its conversations files decompress to more than {} MiB in all; if the archive is genuine, raise the limit with --max-unzipped-mib",
                self.limits.unzipped_bytes >> 20
            )));
        }
        Ok(n)
    }
}
