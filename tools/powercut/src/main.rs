//! powercut: a FUSE file system that loses, at a simulated power cut, whatever no sync made durable.
//!
//! ```text
//! powercut mount BACKING MOUNTPOINT [--control SOCKET] [--modes discard,subset,torn,names]
//! powercut cut SOCKET [--seed N] [--mode MODE]
//! powercut status SOCKET
//! ```
//!
//! `mount` serves BACKING (a directory that holds the durable state, as a disk would) at MOUNTPOINT
//! until it is unmounted (`fusermount3 -u MOUNTPOINT`) or gets SIGINT/SIGTERM. `cut` asks the mounted
//! file system, through its control socket, to cut the power: every process using it should have been
//! killed first (as a power cut would). It prints what it did, with the seed that does it again.
//! See docs/contributing.md, "Power loss".

mod model;

use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    LockOwner, MountOption, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
    WriteFlags,
};
use model::{Inode, Mode, Model, Op, Rng};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Nothing is cached by the kernel: after a cut the same names may lead elsewhere, and sizes change.
const TTL: Duration = Duration::ZERO;

struct PowerCut {
    model: Arc<Mutex<Model>>,
}

fn errno(e: i32) -> Errno {
    Errno::from_i32(e)
}

fn attr(model: &Model, ino: u64, inode: &Inode) -> FileAttr {
    let size = inode.size();
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: inode.mtime,
        mtime: inode.mtime,
        ctime: inode.ctime,
        crtime: inode.ctime,
        kind: if inode.is_dir() {
            FileType::Directory
        } else {
            FileType::RegularFile
        },
        perm: inode.perm as u16,
        nlink: model.nlink(ino),
        uid: inode.uid,
        gid: inode.gid,
        rdev: 0,
        flags: 0,
        blksize: 4096,
    }
}

impl PowerCut {
    fn with<T>(&self, f: impl FnOnce(&mut Model) -> Result<T, i32>) -> Result<T, Errno> {
        let mut model = self.model.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut model).map_err(errno)
    }

    fn entry(&self, reply: ReplyEntry, f: impl FnOnce(&mut Model) -> Result<u64, i32>) {
        match self.with(|m| {
            let ino = f(m)?;
            Ok(attr(m, ino, m.get(ino)?))
        }) {
            Ok(a) => reply.entry(&TTL, &a, Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn empty(&self, reply: ReplyEmpty, f: impl FnOnce(&mut Model) -> Result<(), i32>) {
        match self.with(f) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }
}

impl Filesystem for PowerCut {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        self.entry(reply, |m| m.lookup(parent.0, name));
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.with(|m| Ok(attr(m, ino.0, m.get(ino.0)?))) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // Modes, owners and times are metadata no test of durability looks at: they apply at once
        // and stay. Only a size is a change of the data, pending until a sync.
        let result = self.with(|m| {
            if let Some(size) = size {
                m.change(ino.0, Op::SetLen(size))?;
            }
            let inode = m.inodes.get_mut(&ino.0).ok_or(libc::ESTALE)?;
            if let Some(mode) = mode {
                inode.perm = mode & 0o7777;
            }
            if let Some(uid) = uid {
                inode.uid = uid;
            }
            if let Some(gid) = gid {
                inode.gid = gid;
            }
            match mtime {
                Some(TimeOrNow::SpecificTime(t)) => inode.mtime = t,
                Some(TimeOrNow::Now) => inode.mtime = SystemTime::now(),
                None => {}
            }
            inode.ctime = SystemTime::now();
            Ok(attr(m, ino.0, m.get(ino.0)?))
        });
        match result {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(e),
        }
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let (uid, gid) = (req.uid(), req.gid());
        self.entry(reply, |m| m.create(parent.0, name, true, mode, uid, gid));
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        if mode & libc::S_IFMT != libc::S_IFREG {
            return reply.error(Errno::EPERM);
        }
        let (uid, gid) = (req.uid(), req.gid());
        self.entry(reply, |m| m.create(parent.0, name, false, mode, uid, gid));
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let (uid, gid) = (req.uid(), req.gid());
        match self.with(|m| {
            let ino = m.create(parent.0, name, false, mode, uid, gid)?;
            Ok(attr(m, ino, m.get(ino)?))
        }) {
            Ok(a) => reply.created(&TTL, &a, Generation(0), FileHandle(0), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.empty(reply, |m| m.remove(parent.0, name, false));
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        self.empty(reply, |m| m.remove(parent.0, name, true));
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if flags.contains(RenameFlags::RENAME_EXCHANGE) {
            return reply.error(Errno::EINVAL);
        }
        let no_replace = flags.contains(RenameFlags::RENAME_NOREPLACE);
        self.empty(reply, |m| {
            m.rename(parent.0, name, newparent.0, newname, no_replace)
        });
    }

    fn link(
        &self,
        _req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        self.entry(reply, |m| {
            m.link(ino.0, newparent.0, newname)?;
            Ok(ino.0)
        });
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        // No FOPEN_KEEP_CACHE: each open drops the kernel's cached pages, which a cut may have made
        // stale. Not direct I/O: SQLite maps its -shm file, which needs the page cache.
        match self.with(|m| m.get(ino.0).map(|_| ())) {
            Ok(()) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Err(e) => reply.error(e),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let model = self.model.lock().unwrap_or_else(|e| e.into_inner());
        match model.read(ino.0, offset, size) {
            Ok(data) => reply.data(data),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.with(|m| m.change(ino.0, Op::Write(offset, data.to_vec()))) {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close() makes nothing durable.
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.empty(reply, |m| m.sync(ino.0));
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        self.empty(reply, |m| m.sync(ino.0));
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let listed = self.with(|m| m.readdir(ino.0));
        let entries = match listed {
            Ok(entries) => entries,
            Err(e) => return reply.error(e),
        };
        let mut all = vec![
            (ino.0, true, std::ffi::OsString::from(".")),
            (ino.0, true, std::ffi::OsString::from("..")),
        ];
        all.extend(entries.into_iter().map(|(name, i, dir)| (i, dir, name)));
        for (i, (child, dir, name)) in all.into_iter().enumerate().skip(offset as usize) {
            let kind = if dir {
                FileType::Directory
            } else {
                FileType::RegularFile
            };
            if reply.add(INodeNo(child), i as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        reply.statfs(1 << 24, 1 << 23, 1 << 23, 1 << 20, 1 << 19, 4096, 255, 4096);
    }
}

fn usage() -> ! {
    eprintln!(
        "usage:\n  powercut mount BACKING MOUNTPOINT [--control SOCKET] [--modes discard,subset,torn,names]\n  powercut cut SOCKET [--seed N] [--mode discard|subset|torn|names]\n  powercut status SOCKET\nSee docs/contributing.md, \"Power loss\"."
    );
    std::process::exit(2);
}

fn fail(what: impl std::fmt::Display) -> ! {
    eprintln!("powercut: {what}");
    std::process::exit(1);
}

/// A seed from the clock, when none is given.
fn clock_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    nanos ^ u64::from(std::process::id()).rotate_left(40)
}

/// One control command: `cut [SEED] [MODE]` or `status`; the answer is one line.
fn control(model: &Mutex<Model>, modes: &[Mode], line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["cut", rest @ ..] => {
            let seed = match rest.first() {
                Some(s) => match s.parse::<u64>() {
                    Ok(seed) => seed,
                    Err(_) => return format!("error: the seed {s:?} is not a number"),
                },
                None => clock_seed(),
            };
            let mut rng = Rng::new(seed);
            let mode = match rest.get(1) {
                Some(name) => match Mode::parse(name) {
                    Some(mode) => mode,
                    None => {
                        return format!(
                            "error: no cut mode {name:?} (discard, subset, torn, names)"
                        );
                    }
                },
                None => modes[rng.below(modes.len() as u64) as usize],
            };
            let mut model = model.lock().unwrap_or_else(|e| e.into_inner());
            match model.cut(mode, &mut rng) {
                Ok(r) => format!(
                    "cut seed={seed} mode={} lost_ops={} kept_ops={} torn={} lost_names={} kept_names={}",
                    mode.name(),
                    r.lost_ops,
                    r.kept_ops,
                    r.torn,
                    r.lost_names,
                    r.kept_names
                ),
                Err(e) => format!("error: the cut could not write the backing directory: {e}"),
            }
        }
        ["status"] => {
            let model = model.lock().unwrap_or_else(|e| e.into_inner());
            let (ops, dirs) = model.pending();
            format!(
                "status syncs={} cuts={} pending_ops={ops} unsynced_dirs={dirs}",
                model.syncs, model.cuts
            )
        }
        _ => "error: commands are `cut [SEED] [MODE]` and `status`".to_string(),
    }
}

fn serve_control(listener: UnixListener, model: Arc<Mutex<Model>>, modes: Vec<Mode>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let Ok(reader) = stream.try_clone() else {
            continue;
        };
        let mut writer = stream;
        for line in BufReader::new(reader).lines() {
            let Ok(line) = line else { break };
            let answer = control(&model, &modes, &line);
            if writeln!(writer, "{answer}").is_err() {
                break;
            }
        }
    }
}

fn ask(socket: &Path, line: &str) -> String {
    let mut stream = UnixStream::connect(socket).unwrap_or_else(|e| {
        fail(format!(
            "cannot reach the control socket {}: {e}. Is `powercut mount ... --control {}` running?",
            socket.display(),
            socket.display()
        ))
    });
    writeln!(stream, "{line}").unwrap_or_else(|e| fail(e));
    let mut answer = String::new();
    BufReader::new(stream)
        .read_line(&mut answer)
        .unwrap_or_else(|e| fail(e));
    answer.trim_end().to_string()
}

static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, std::sync::atomic::Ordering::SeqCst);
}

fn mount(args: &[String]) {
    let (mut positional, mut socket, mut modes) = (Vec::new(), None, Mode::ALL.to_vec());
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--control" => socket = Some(PathBuf::from(it.next().unwrap_or_else(|| usage()))),
            "--modes" => {
                let list = it.next().unwrap_or_else(|| usage());
                modes = list
                    .split(',')
                    .map(|m| Mode::parse(m).unwrap_or_else(|| fail(format!("no cut mode {m:?}"))))
                    .collect();
            }
            _ => positional.push(PathBuf::from(arg)),
        }
    }
    let [backing, mountpoint] = positional.as_slice() else {
        usage()
    };
    let model = Model::load(backing).unwrap_or_else(|e| {
        fail(format!(
            "cannot read the backing directory {}: {e}",
            backing.display()
        ))
    });
    let model = Arc::new(Mutex::new(model));
    if let Some(socket) = &socket {
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket).unwrap_or_else(|e| {
            fail(format!(
                "cannot listen on the control socket {}: {e}",
                socket.display()
            ))
        });
        let (model, modes) = (model.clone(), modes.clone());
        std::thread::spawn(move || serve_control(listener, model, modes));
    }
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("powercut".to_string()),
        MountOption::Subtype("powercut".to_string()),
        MountOption::DefaultPermissions,
    ];
    let mut session = fuser::Session::new(
        PowerCut {
            model: model.clone(),
        },
        mountpoint,
        &config,
    )
    .unwrap_or_else(|e| {
        fail(format!(
            "cannot mount at {}: {e}. It needs /dev/fuse and fusermount3 (Debian: apt-get install fuse3)",
            mountpoint.display()
        ))
    });
    let mut unmounter = session.unmount_callable();
    let served = std::thread::spawn(move || {
        let result = session.run();
        STOP.store(true, std::sync::atomic::Ordering::SeqCst);
        result
    });
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    eprintln!(
        "powercut: {} mounted at {}{}",
        backing.display(),
        mountpoint.display(),
        socket
            .as_ref()
            .map(|s| format!(", control socket {}", s.display()))
            .unwrap_or_default()
    );
    while !STOP.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if !served.is_finished() {
        let _ = unmounter.unmount();
    }
    let _ = served.join();
    // Unmounting is a power cut too: what was never synced never reached the backing directory.
    if let Some(socket) = &socket {
        let _ = std::fs::remove_file(socket);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("mount") => mount(&args[1..]),
        Some("cut") => {
            let socket = PathBuf::from(args.get(1).unwrap_or_else(|| usage()));
            let (mut seed, mut mode) = (None, None);
            let mut it = args[2..].iter();
            while let Some(arg) = it.next() {
                match arg.as_str() {
                    "--seed" => seed = it.next().cloned(),
                    "--mode" => mode = it.next().cloned(),
                    _ => usage(),
                }
            }
            let seed = seed.unwrap_or_else(|| clock_seed().to_string());
            let answer = ask(&socket, &format!("cut {seed} {}", mode.unwrap_or_default()));
            println!("{answer}");
            if answer.starts_with("error") {
                std::process::exit(1);
            }
        }
        Some("status") => {
            let socket = PathBuf::from(args.get(1).unwrap_or_else(|| usage()));
            println!("{}", ask(&socket, "status"));
        }
        _ => usage(),
    }
}
