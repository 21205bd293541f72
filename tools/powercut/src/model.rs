//! The file system's state: what a disk holds (durable) and what only the page cache holds (pending).
//!
//! Every file's current bytes are in memory, with the bytes a sync made durable and the writes and
//! truncations since then, in order. Every directory has its current entries and the entries a sync
//! of it made durable. A sync moves the current state to the durable one and writes it through to the
//! backing directory, which thus always holds exactly the durable state (what a disk would show after
//! a power cut that lost everything not synced). A cut throws the pending state away, or keeps part
//! of it (`Mode`), like a disk whose cache reached the platter in any order before the power went.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// An errno value.
pub type Errno = i32;

/// The sector size a torn write is cut at.
pub const SECTOR: u64 = 512;

#[derive(Clone, Debug)]
pub enum Op {
    Write(u64, Vec<u8>),
    SetLen(u64),
}

impl Op {
    fn apply(&self, data: &mut Vec<u8>) {
        match self {
            Op::Write(offset, bytes) => {
                let start = *offset as usize;
                let end = start + bytes.len();
                if data.len() < end {
                    data.resize(end, 0);
                }
                data[start..end].copy_from_slice(bytes);
            }
            Op::SetLen(len) => data.resize(*len as usize, 0),
        }
    }

    fn apply_to_file(&self, file: &fs::File) -> io::Result<()> {
        match self {
            Op::Write(offset, bytes) => file.write_all_at(bytes, *offset),
            Op::SetLen(len) => file.set_len(*len),
        }
    }
}

pub enum Body {
    File {
        data: Vec<u8>,
        durable: Vec<u8>,
        pending: Vec<Op>,
    },
    Dir {
        entries: BTreeMap<OsString, u64>,
        durable: BTreeMap<OsString, u64>,
    },
}

pub struct Inode {
    pub perm: u32,
    pub uid: u32,
    pub gid: u32,
    pub mtime: SystemTime,
    pub ctime: SystemTime,
    pub body: Body,
}

impl Inode {
    pub fn is_dir(&self) -> bool {
        matches!(self.body, Body::Dir { .. })
    }

    pub fn size(&self) -> u64 {
        match &self.body {
            Body::File { data, .. } => data.len() as u64,
            Body::Dir { .. } => 4096,
        }
    }
}

/// What a cut does with the pending state, chosen at random per cut unless asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every unsynced write, truncation and name change is lost.
    Discard,
    /// Each file keeps an arbitrary subset of its unsynced writes and truncations, applied in an
    /// arbitrary order; each directory keeps or loses all its unsynced name changes.
    Subset,
    /// Each file keeps a prefix of its unsynced writes, the last of which is torn at a 512-byte
    /// boundary (only its first sectors arrive); directories as in `Subset`.
    Torn,
    /// Every write reaches the disk, but no name change a directory sync did not make durable.
    Names,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Discard, Mode::Subset, Mode::Torn, Mode::Names];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Discard => "discard",
            Mode::Subset => "subset",
            Mode::Torn => "torn",
            Mode::Names => "names",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// xorshift64*: small, and the same cut again from the same seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What a cut did, for the log line the harness prints.
#[derive(Default, Debug)]
pub struct CutReport {
    pub lost_ops: usize,
    pub kept_ops: usize,
    pub torn: usize,
    pub lost_names: usize,
    pub kept_names: usize,
}

pub struct Model {
    backing: PathBuf,
    pub inodes: HashMap<u64, Inode>,
    next_ino: u64,
    pub syncs: u64,
    pub cuts: u64,
}

pub const ROOT: u64 = 1;

impl Model {
    /// The backing directory's tree, read into memory as both current and durable state.
    pub fn load(backing: &Path) -> io::Result<Model> {
        let mut model = Model {
            backing: backing.to_path_buf(),
            inodes: HashMap::new(),
            next_ino: ROOT,
            syncs: 0,
            cuts: 0,
        };
        model.load_dir(backing)?;
        Ok(model)
    }

    fn load_dir(&mut self, path: &Path) -> io::Result<u64> {
        let meta = fs::metadata(path)?;
        let ino = self.alloc();
        let mut entries = BTreeMap::new();
        for entry in fs::read_dir(path)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let child = if kind.is_dir() {
                self.load_dir(&entry.path())?
            } else if kind.is_file() {
                let meta = entry.metadata()?;
                let data = fs::read(entry.path())?;
                let child = self.alloc();
                self.inodes.insert(
                    child,
                    Inode {
                        perm: meta.permissions().mode() & 0o7777,
                        uid: meta.uid(),
                        gid: meta.gid(),
                        mtime: meta.modified()?,
                        ctime: meta.modified()?,
                        body: Body::File {
                            durable: data.clone(),
                            data,
                            pending: Vec::new(),
                        },
                    },
                );
                child
            } else {
                continue;
            };
            entries.insert(entry.file_name(), child);
        }
        self.inodes.insert(
            ino,
            Inode {
                perm: meta.permissions().mode() & 0o7777,
                uid: meta.uid(),
                gid: meta.gid(),
                mtime: meta.modified()?,
                ctime: meta.modified()?,
                body: Body::Dir {
                    durable: entries.clone(),
                    entries,
                },
            },
        );
        Ok(ino)
    }

    fn alloc(&mut self) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        ino
    }

    pub fn get(&self, ino: u64) -> Result<&Inode, Errno> {
        self.inodes.get(&ino).ok_or(libc::ESTALE)
    }

    fn get_mut(&mut self, ino: u64) -> Result<&mut Inode, Errno> {
        self.inodes.get_mut(&ino).ok_or(libc::ESTALE)
    }

    fn entries(&self, dir: u64) -> Result<&BTreeMap<OsString, u64>, Errno> {
        match &self.get(dir)?.body {
            Body::Dir { entries, .. } => Ok(entries),
            Body::File { .. } => Err(libc::ENOTDIR),
        }
    }

    fn entries_mut(&mut self, dir: u64) -> Result<&mut BTreeMap<OsString, u64>, Errno> {
        let inode = self.get_mut(dir)?;
        inode.mtime = SystemTime::now();
        inode.ctime = inode.mtime;
        match &mut inode.body {
            Body::Dir { entries, .. } => Ok(entries),
            Body::File { .. } => Err(libc::ENOTDIR),
        }
    }

    pub fn lookup(&self, dir: u64, name: &OsStr) -> Result<u64, Errno> {
        self.entries(dir)?.get(name).copied().ok_or(libc::ENOENT)
    }

    /// The number of current names of `ino` (a directory counts its own and its subdirectories').
    pub fn nlink(&self, ino: u64) -> u32 {
        let mut n = 0;
        for inode in self.inodes.values() {
            if let Body::Dir { entries, .. } = &inode.body {
                n += entries.values().filter(|&&child| child == ino).count() as u32;
            }
        }
        if let Ok(Body::Dir { entries, .. }) = self.get(ino).map(|i| &i.body) {
            n += 1 + entries
                .values()
                .filter(|c| self.get(**c).is_ok_and(Inode::is_dir))
                .count() as u32;
        }
        n
    }

    pub fn readdir(&self, dir: u64) -> Result<Vec<(OsString, u64, bool)>, Errno> {
        Ok(self
            .entries(dir)?
            .iter()
            .map(|(name, &ino)| (name.clone(), ino, self.get(ino).is_ok_and(Inode::is_dir)))
            .collect())
    }

    pub fn create(
        &mut self,
        dir: u64,
        name: &OsStr,
        is_dir: bool,
        perm: u32,
        uid: u32,
        gid: u32,
    ) -> Result<u64, Errno> {
        if self.entries(dir)?.contains_key(name) {
            return Err(libc::EEXIST);
        }
        let ino = self.alloc();
        let now = SystemTime::now();
        let body = if is_dir {
            Body::Dir {
                entries: BTreeMap::new(),
                durable: BTreeMap::new(),
            }
        } else {
            Body::File {
                data: Vec::new(),
                durable: Vec::new(),
                pending: Vec::new(),
            }
        };
        self.inodes.insert(
            ino,
            Inode {
                perm: perm & 0o7777,
                uid,
                gid,
                mtime: now,
                ctime: now,
                body,
            },
        );
        self.entries_mut(dir)?.insert(name.to_os_string(), ino);
        Ok(ino)
    }

    pub fn read(&self, ino: u64, offset: u64, size: u32) -> Result<&[u8], Errno> {
        match &self.get(ino)?.body {
            Body::File { data, .. } => {
                let start = (offset as usize).min(data.len());
                let end = (start + size as usize).min(data.len());
                Ok(&data[start..end])
            }
            Body::Dir { .. } => Err(libc::EISDIR),
        }
    }

    pub fn change(&mut self, ino: u64, op: Op) -> Result<(), Errno> {
        let inode = self.get_mut(ino)?;
        inode.mtime = SystemTime::now();
        inode.ctime = inode.mtime;
        match &mut inode.body {
            Body::File { data, pending, .. } => {
                op.apply(data);
                pending.push(op);
                Ok(())
            }
            Body::Dir { .. } => Err(libc::EISDIR),
        }
    }

    pub fn remove(&mut self, dir: u64, name: &OsStr, want_dir: bool) -> Result<(), Errno> {
        let ino = self.lookup(dir, name)?;
        let inode = self.get(ino)?;
        match (&inode.body, want_dir) {
            (Body::Dir { entries, .. }, true) if !entries.is_empty() => {
                return Err(libc::ENOTEMPTY);
            }
            (Body::Dir { .. }, false) => return Err(libc::EISDIR),
            (Body::File { .. }, true) => return Err(libc::ENOTDIR),
            _ => {}
        }
        self.entries_mut(dir)?.remove(name);
        Ok(())
    }

    pub fn link(&mut self, ino: u64, dir: u64, name: &OsStr) -> Result<(), Errno> {
        if self.get(ino)?.is_dir() {
            return Err(libc::EPERM);
        }
        if self.entries(dir)?.contains_key(name) {
            return Err(libc::EEXIST);
        }
        self.entries_mut(dir)?.insert(name.to_os_string(), ino);
        self.get_mut(ino)?.ctime = SystemTime::now();
        Ok(())
    }

    pub fn rename(
        &mut self,
        dir: u64,
        name: &OsStr,
        new_dir: u64,
        new_name: &OsStr,
        no_replace: bool,
    ) -> Result<(), Errno> {
        let ino = self.lookup(dir, name)?;
        if let Ok(target) = self.lookup(new_dir, new_name) {
            if target == ino {
                return Ok(());
            }
            if no_replace {
                return Err(libc::EEXIST);
            }
            let (a, b) = (self.get(ino)?.is_dir(), self.get(target)?.is_dir());
            if a != b {
                return Err(if b { libc::EISDIR } else { libc::ENOTDIR });
            }
            if let Body::Dir { entries, .. } = &self.get(target)?.body
                && !entries.is_empty()
            {
                return Err(libc::ENOTEMPTY);
            }
        }
        self.entries_mut(dir)?.remove(name);
        self.entries_mut(new_dir)?
            .insert(new_name.to_os_string(), ino);
        Ok(())
    }

    /// The backing paths of every durable name of `ino` (found from the root through durable
    /// entries).
    fn durable_paths(&self, ino: u64) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![(ROOT, self.backing.clone())];
        while let Some((dir, path)) = stack.pop() {
            if dir == ino {
                found.push(path.clone());
            }
            if let Some(Inode {
                body: Body::Dir { durable, .. },
                ..
            }) = self.inodes.get(&dir)
            {
                for (name, &child) in durable {
                    let child_path = path.join(name);
                    if self.inodes.get(&child).is_some_and(Inode::is_dir) {
                        stack.push((child, child_path));
                    } else if child == ino {
                        found.push(child_path);
                    }
                }
            }
        }
        found
    }

    /// `fsync` or `fdatasync` of a file: its writes are durable. Of a directory: its entries are.
    pub fn sync(&mut self, ino: u64) -> Result<(), Errno> {
        self.syncs += 1;
        if self.get(ino)?.is_dir() {
            return self.sync_dir(ino).map_err(|_| libc::EIO);
        }
        let ops = match &mut self.get_mut(ino)?.body {
            Body::File { pending, .. } => std::mem::take(pending),
            Body::Dir { .. } => unreachable!(),
        };
        self.make_durable(ino, &ops).map_err(|_| libc::EIO)
    }

    /// Apply `ops` to the durable bytes of `ino` and to its backing files.
    fn make_durable(&mut self, ino: u64, ops: &[Op]) -> io::Result<()> {
        if ops.is_empty() {
            return Ok(());
        }
        for path in self.durable_paths(ino) {
            let file = fs::OpenOptions::new().write(true).open(&path)?;
            for op in ops {
                op.apply_to_file(&file)?;
            }
        }
        if let Some(Inode {
            body: Body::File { durable, .. },
            ..
        }) = self.inodes.get_mut(&ino)
        {
            for op in ops {
                op.apply(durable);
            }
        }
        Ok(())
    }

    fn sync_dir(&mut self, dir: u64) -> io::Result<()> {
        let (current, old) = match &self.inodes[&dir].body {
            Body::Dir { entries, durable } => (entries.clone(), durable.clone()),
            Body::File { .. } => unreachable!(),
        };
        if current == old {
            return Ok(());
        }
        let paths = self.durable_paths(dir);
        if let Some(Inode {
            body: Body::Dir { durable, .. },
            ..
        }) = self.inodes.get_mut(&dir)
        {
            durable.clone_from(&current);
        }
        for path in paths {
            for (name, ino) in &old {
                if current.get(name) != Some(ino) {
                    let p = path.join(name);
                    if p.is_dir() {
                        fs::remove_dir_all(&p)?;
                    } else {
                        fs::remove_file(&p)?;
                    }
                }
            }
            for (name, &ino) in &current {
                if old.get(name) != Some(&ino) {
                    self.write_tree(ino, &path.join(name))?;
                }
            }
        }
        Ok(())
    }

    /// Write the durable state of `ino` (a file's bytes, a directory's durable tree) at `path`.
    fn write_tree(&self, ino: u64, path: &Path) -> io::Result<()> {
        let inode = &self.inodes[&ino];
        match &inode.body {
            Body::File { durable, .. } => {
                fs::write(path, durable)?;
                fs::set_permissions(path, fs::Permissions::from_mode(inode.perm))?;
            }
            Body::Dir { durable, .. } => {
                fs::create_dir(path)?;
                for (name, &child) in durable {
                    self.write_tree(child, &path.join(name))?;
                }
            }
        }
        Ok(())
    }

    /// The power goes: pending state is lost (or partly kept, per `mode`), and the current state
    /// becomes the durable one.
    pub fn cut(&mut self, mode: Mode, rng: &mut Rng) -> io::Result<CutReport> {
        self.cuts += 1;
        let mut report = CutReport::default();
        let mut files: Vec<u64> = self.inodes.keys().copied().collect();
        files.sort_unstable();
        for ino in files {
            let ops = match &mut self.inodes.get_mut(&ino).unwrap().body {
                Body::File { pending, .. } => std::mem::take(pending),
                Body::Dir { .. } => continue,
            };
            let kept = choose(ops.clone(), mode, rng, &mut report);
            report.lost_ops += ops.len().saturating_sub(kept.len());
            report.kept_ops += kept.len();
            self.make_durable(ino, &kept)?;
            if let Body::File { data, durable, .. } = &mut self.inodes.get_mut(&ino).unwrap().body {
                data.clone_from(durable);
            }
        }
        let mut dirs: Vec<u64> = self
            .inodes
            .iter()
            .filter(|(_, i)| i.is_dir())
            .map(|(&ino, _)| ino)
            .collect();
        dirs.sort_unstable();
        for dir in dirs {
            let changed = match &self.inodes[&dir].body {
                Body::Dir { entries, durable } => entries != durable,
                Body::File { .. } => false,
            };
            if !changed {
                continue;
            }
            let keep = matches!(mode, Mode::Subset | Mode::Torn) && rng.below(2) == 0;
            if keep {
                report.kept_names += 1;
                self.sync_dir(dir)?;
            } else {
                report.lost_names += 1;
                if let Body::Dir { entries, durable } = &mut self.inodes.get_mut(&dir).unwrap().body
                {
                    entries.clone_from(durable);
                }
            }
        }
        // Whatever no name reaches any more is gone (the processes that had it open are dead).
        let mut reachable = HashSet::new();
        let mut stack = vec![ROOT];
        while let Some(ino) = stack.pop() {
            if reachable.insert(ino)
                && let Some(Inode {
                    body: Body::Dir { entries, .. },
                    ..
                }) = self.inodes.get(&ino)
            {
                stack.extend(entries.values().copied());
            }
        }
        self.inodes.retain(|ino, _| reachable.contains(ino));
        Ok(report)
    }

    /// Count of bytes and operations not yet durable, for `status`.
    pub fn pending(&self) -> (usize, usize) {
        let mut ops = 0;
        let mut names = 0;
        for inode in self.inodes.values() {
            match &inode.body {
                Body::File { pending, .. } => ops += pending.len(),
                Body::Dir { entries, durable } => names += usize::from(entries != durable),
            }
        }
        (ops, names)
    }
}

/// The unsynced operations of one file that reach the disk at a cut, in the order they land.
fn choose(mut ops: Vec<Op>, mode: Mode, rng: &mut Rng, report: &mut CutReport) -> Vec<Op> {
    match mode {
        Mode::Discard => Vec::new(),
        Mode::Names => ops,
        Mode::Subset => {
            ops.retain(|_| rng.below(2) == 0);
            // Fisher-Yates: the disk's order, not the program's.
            for i in (1..ops.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                ops.swap(i, j);
            }
            ops
        }
        Mode::Torn => {
            if ops.is_empty() {
                return ops;
            }
            let n = 1 + rng.below(ops.len() as u64) as usize;
            ops.truncate(n);
            if let Some(Op::Write(offset, bytes)) = ops.last_mut() {
                // A cut inside the write, at a sector boundary of the file.
                let end = *offset + bytes.len() as u64;
                let first = (*offset).div_ceil(SECTOR) * SECTOR;
                let boundaries: Vec<u64> = (first..end).step_by(SECTOR as usize).collect();
                let at = if boundaries.is_empty() {
                    *offset
                } else {
                    boundaries[rng.below(boundaries.len() as u64) as usize]
                };
                bytes.truncate((at - *offset) as usize);
                report.torn += 1;
            }
            ops
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(model: &Model, ino: u64) -> (Vec<u8>, Vec<u8>) {
        match &model.inodes[&ino].body {
            Body::File { data, durable, .. } => (data.clone(), durable.clone()),
            Body::Dir { .. } => panic!("a directory"),
        }
    }

    fn fresh() -> (tempdir::Dir, Model) {
        let dir = tempdir::Dir::new();
        let model = Model::load(&dir.0).unwrap();
        (dir, model)
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos();
                let p = std::env::temp_dir()
                    .join(format!("powercut-test-{}-{nanos}", std::process::id()));
                std::fs::create_dir(&p).unwrap();
                Dir(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn a_discard_cut_loses_what_no_sync_made_durable() {
        let (dir, mut m) = fresh();
        let f = m.create(ROOT, OsStr::new("a"), false, 0o600, 0, 0).unwrap();
        m.change(f, Op::Write(0, b"one".to_vec())).unwrap();
        m.sync(f).unwrap();
        m.sync(ROOT).unwrap();
        assert_eq!(fs::read(dir.0.join("a")).unwrap(), b"one");
        m.change(f, Op::Write(3, b"two".to_vec())).unwrap();
        let g = m.create(ROOT, OsStr::new("b"), false, 0o600, 0, 0).unwrap();
        m.sync(g).unwrap();
        m.cut(Mode::Discard, &mut Rng::new(1)).unwrap();
        assert_eq!(file(&m, f).0, b"one");
        assert_eq!(m.lookup(ROOT, OsStr::new("b")), Err(libc::ENOENT));
        assert!(!dir.0.join("b").exists());
        let reloaded = Model::load(&dir.0).unwrap();
        let f2 = reloaded.lookup(ROOT, OsStr::new("a")).unwrap();
        assert_eq!(file(&reloaded, f2).0, b"one");
    }

    #[test]
    fn a_rename_is_durable_only_with_its_directory() {
        let (dir, mut m) = fresh();
        let f = m.create(ROOT, OsStr::new("t"), false, 0o600, 0, 0).unwrap();
        m.change(f, Op::Write(0, b"new".to_vec())).unwrap();
        m.sync(f).unwrap();
        m.rename(ROOT, OsStr::new("t"), ROOT, OsStr::new("db"), false)
            .unwrap();
        m.cut(Mode::Names, &mut Rng::new(2)).unwrap();
        assert!(m.lookup(ROOT, OsStr::new("db")).is_err());
        let f = m.create(ROOT, OsStr::new("t"), false, 0o600, 0, 0).unwrap();
        m.change(f, Op::Write(0, b"new".to_vec())).unwrap();
        m.sync(f).unwrap();
        m.rename(ROOT, OsStr::new("t"), ROOT, OsStr::new("db"), false)
            .unwrap();
        m.sync(ROOT).unwrap();
        m.cut(Mode::Discard, &mut Rng::new(3)).unwrap();
        assert_eq!(fs::read(dir.0.join("db")).unwrap(), b"new");
        assert!(!dir.0.join("t").exists());
    }

    #[test]
    fn a_torn_write_keeps_whole_sectors_only() {
        let (_dir, mut m) = fresh();
        let f = m.create(ROOT, OsStr::new("a"), false, 0o600, 0, 0).unwrap();
        m.sync(ROOT).unwrap();
        m.change(f, Op::Write(0, vec![7; 2000])).unwrap();
        for seed in 0..20 {
            let mut m2 = Model::load(&m.backing).unwrap();
            let f2 = m2.lookup(ROOT, OsStr::new("a")).unwrap();
            m2.change(f2, Op::Write(0, vec![7; 2000])).unwrap();
            m2.cut(Mode::Torn, &mut Rng::new(seed)).unwrap();
            let len = file(&m2, f2).1.len() as u64;
            assert_eq!(len % SECTOR, 0, "seed {seed}: {len}");
            assert!(len < 2000);
            m2.cut(Mode::Discard, &mut Rng::new(seed)).unwrap();
            fs::write(m.backing.join("a"), b"").unwrap();
        }
    }
}
