//! The generate stage: plan → rendered tree → output folder. The only I/O here is finding
//! where the output folder sits (to place the layer for kas) and the writer.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::files::write::{self, Change, WriteOptions, WriteReport};
use crate::layer::render::{self, LAYER_DIR, LayerPlacement};
use crate::plan::Plan;
use crate::plan::build_path::{self, real_path};
use crate::plan::values::ValueError;
use crate::text::ui::Ui;

/// Where and how to generate.
#[derive(Debug, Clone)]
pub(crate) struct GenerateOptions {
    /// The output folder (created when missing).
    pub out: PathBuf,
    pub write: WriteOptions,
}

/// What `generate` produced.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Generated {
    pub out: PathBuf,
    /// The kas file to hand to `kas build`.
    pub kas_file: PathBuf,
    /// The plan's expectations file (`rtbuild-plan.json`).
    pub plan_file: PathBuf,
    pub report: WriteReport,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum GenerateError {
    #[error(
        "output folder {} sits at `{path}` inside its git work tree, which BitBake cannot use as a layer path; use an output folder whose path has only letters, digits and `-_.+/`",
        .out.display()
    )]
    UnsafeLayerPath { out: PathBuf, path: String },
    #[error(transparent)]
    UnsafePath(#[from] ValueError),
    #[error(
        "--include {}: kas reads local includes from the repository holding the kas file, {}, and this file is outside it; move the file into {}, or put the output folder (--out) in the git work tree that holds the file",
        .file.display(), .repo.display(), .repo.display()
    )]
    IncludeOutside { file: PathBuf, repo: PathBuf },
    #[error(
        "output folder {} cannot be used: {} is a file, not a folder; pass --out a folder (it is created when missing)",
        .out.display(), .file.display()
    )]
    OutIsFile { out: PathBuf, file: PathBuf },
    #[error(transparent)]
    Render(#[from] render::RenderError),
    #[error(transparent)]
    Write(#[from] write::WriteError),
    #[error(transparent)]
    Lock(#[from] crate::release::lock::LockError),
    /// `--out` is a dangling symlink, a device, or on `/proc` or `/sys`.
    #[error(transparent)]
    Output(#[from] crate::files::output::OutputError),
    /// Another rtbuild writes into the same folder.
    #[error(transparent)]
    Busy(#[from] write::folder_lock::Busy),
}

impl crate::error::ErrorCode for GenerateError {
    fn exit(&self) -> crate::error::Exit {
        use crate::error::Exit;
        match self {
            GenerateError::Write(e) => e.exit(),
            _ => Exit::Usage,
        }
    }
}

/// The default output folder for a plan: `rtbuild/<machine>`.
pub(crate) fn default_out(plan: &Plan) -> PathBuf {
    crate::files::paths::machine_out(&plan.machine.name)
}

/// Renders `plan` and writes it under `options.out`.
pub(crate) fn generate(plan: &Plan, options: &GenerateOptions) -> Result<Generated, GenerateError> {
    let out = build_path::check("output folder", &options.out)?;
    // Names what is there (a character device, a FIFO, a file) before the general refusal.
    crate::files::output::check_folder("--out", &out)?;
    if let Some(file) = out.ancestors().find(|p| p.exists()).filter(|p| !p.is_dir()) {
        return Err(GenerateError::OutIsFile { out: out.clone(), file: file.to_path_buf() });
    }
    let layout = layout_for(&out)?;
    let local = local_includes(plan, &out)?;
    let tree = render::render_including(plan, &layout, &local)?;
    // One writer per folder: a second generate into it is refused, not interleaved.
    let _only_writer = match options.write.dry_run {
        true => None,
        false => {
            let io = |source| write::WriteError::Io { path: out.clone(), cause: source };
            std::fs::create_dir_all(&out).map_err(io)?;
            Some(write::folder_lock::lock(&out).map_err(io)??)
        }
    };
    // A signal waits until the folder is wholly new (or wholly old after a failure).
    let _swap = crate::host::runner::signals::critical();
    let mut report = write::apply(&tree, &out, options.write)?;
    // The kas file includes its lock (so the lock wins over meta-qcom's): it must exist. A lock
    // already there is the user's and is kept as it is: counted as unchanged, so a second run
    // counts the files the first one created.
    let lock_name = render::lock_file_name(plan);
    let lock = out.join(&lock_name);
    let change = match lock.exists() {
        true => write::Change::Unchanged,
        false => {
            if !options.write.dry_run {
                crate::release::lock::write_placeholder(&lock)?;
            }
            write::Change::Create
        }
    };
    report.files.push((PathBuf::from(lock_name), change));
    report.files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Generated {
        kas_file: out.join(render::kas_file_name(plan)),
        plan_file: out.join(render::PLAN_FILE),
        out,
        report,
    })
}

/// kas treats a repo entry without `url` and `path` as "the repository holding this kas file":
/// the git work tree around the output folder, or the output folder itself outside git. The
/// layer path must be given relative to that.
pub(crate) fn layout_for(out: &Path) -> Result<LayerPlacement, GenerateError> {
    let Some(top) = git_top(out) else { return Ok(LayerPlacement::default()) };
    let inside = real_path(out).strip_prefix(&top).map(Path::to_path_buf).unwrap_or_default();
    let mut path = inside.join(LAYER_DIR).to_string_lossy().into_owned();
    if inside.components().any(|c| !matches!(c, Component::Normal(_))) {
        path = LAYER_DIR.to_string();
    }
    let safe = path.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.+/".contains(&b));
    if !safe {
        return Err(GenerateError::UnsafeLayerPath { out: out.to_path_buf(), path });
    }
    Ok(LayerPlacement { layer_in_repo: path })
}

/// Each local `--include` by its path inside the repository kas reads the kas file from (the
/// git work tree around `out`, or `out` itself outside git): kas resolves a local include from
/// there and refuses one outside it.
pub(crate) fn local_includes(plan: &Plan, out: &Path) -> Result<Vec<String>, GenerateError> {
    let repo = git_top(out).unwrap_or_else(|| real_path(out));
    crate::plan::include::local_paths(&plan.settings.includes)
        .into_iter()
        .map(|file| match file.strip_prefix(&repo) {
            Ok(inside) => Ok(inside.to_string_lossy().into_owned()),
            Err(_) => Err(GenerateError::IncludeOutside { file, repo: repo.clone() }),
        })
        .collect()
}

/// The top of the git work tree holding `path`, if any.
fn git_top(path: &Path) -> Option<PathBuf> {
    let existing = path.ancestors().find(|p| p.exists())?;
    let repo = git2::Repository::discover(existing).ok()?;
    repo.workdir().map(real_path)
}

/// Generates and tells the user what changed (`rtbuild generate`, and each build before kas runs).
pub(crate) fn generate_and_report(
    plan: &Plan,
    options: &GenerateOptions,
    ui: &Ui,
) -> Result<Generated, GenerateError> {
    for warning in &plan.warnings {
        ui.warn(warning);
    }
    for note in &plan.notes {
        ui.note(note);
    }
    if let Some(alias) = &plan.alias {
        ui.note(format!("`{alias}` is an alias of `{}`", plan.machine.name));
    }
    if let Some(defaults) = &plan.machine_defaults {
        let rt_cpus_given = defaults.source == "catalog";
        if let Some(note) = defaults.note(&plan.machine.name, rt_cpus_given) {
            ui.note(note);
        }
    }
    ui.status(
        "Generating",
        format!(
            "{} (RT CPUs {}, housekeeping {}, {}, {})",
            plan.machine.name,
            plan.layout.rt,
            plan.layout.housekeeping,
            plan.settings.distro,
            plan.settings.image
        ),
    );
    let generated = generate(plan, options)?;
    let dry = options.write.dry_run;
    for (path, change) in &generated.report.files {
        let verb = match (change, dry) {
            (Change::Unchanged, _) => {
                ui.detail(format!("unchanged {}", crate::text::shown_path(path)));
                continue;
            }
            (Change::Create, false) => "Created",
            (Change::Create, true) => "Would create",
            (Change::Update, false) => "Updated",
            (Change::Update, true) => "Would update",
            (Change::Remove, false) => "Removed",
            (Change::Remove, true) => "Would remove",
        };
        ui.status(verb, crate::text::shown_path(path));
    }
    let report = &generated.report;
    ui.status(
        if dry { "Dry run" } else { "Generated" },
        format!(
            "{}: {} new, {} updated, {} removed, {} unchanged",
            crate::text::shown_path(&generated.out),
            report.count(Change::Create),
            report.count(Change::Update),
            report.count(Change::Remove),
            report.count(Change::Unchanged)
        ),
    );
    Ok(generated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_git_the_layer_sits_beside_the_kas_file() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(layout_for(&dir.path().join("out")).unwrap(), LayerPlacement::default());
    }

    #[test]
    fn inside_git_the_layer_path_starts_at_the_top_of_the_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let layout = layout_for(&dir.path().join("bsp/rtbuild/rb3")).unwrap();
        assert_eq!(layout.layer_in_repo, "bsp/rtbuild/rb3/meta-rtbuild");
    }

    #[test]
    fn unsafe_folder_names_inside_git_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        git2::Repository::init(dir.path()).unwrap();
        let err = layout_for(&dir.path().join("my build")).unwrap_err();
        assert!(err.to_string().contains("`my build/meta-rtbuild`"), "{err}");
    }
}
