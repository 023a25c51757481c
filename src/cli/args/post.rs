//! `--no-verify`, `--bundle`: what runs after a successful build, shared by `image` and
//! `matrix`.

use clap::Args;

use crate::image::kas::command::BuildSpec;
use crate::image::pipeline::Post;
use crate::text::ui::Ui;

/// What happens after a successful build.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct PostArgs {
    /// Do not verify the kernel config, command line and packages against the plan after the
    /// build (verification runs by default and fails the build when a check fails).
    #[arg(long, conflicts_with = "bundle")]
    pub no_verify: bool,
    /// Build, verify, then pack the qcomflash output into a bundle under <out>/bundle/.
    #[arg(long)]
    pub bundle: bool,
    /// With --bundle: write the bundle as .tar.gz, the flavour LAVA's qdl deploy unpacks (it
    /// gunzips whatever it downloads), instead of .tar.zst.
    #[arg(long, requires = "bundle")]
    pub gzip: bool,
    /// `SOURCE_DATE_EPOCH` for the bundle's archive mtime and fallback build time (ignored
    /// when it is not a number). Hidden: the variable reproducible builds set, not a flag.
    #[arg(long, hide = true, value_name = "SECONDS", env = "SOURCE_DATE_EPOCH")]
    pub env_source_date_epoch: Option<std::ffi::OsString>,
}

impl PostArgs {
    /// The post-build steps for a build of `spec` (see [`Post::decide`]).
    pub(crate) fn decide(&self, spec: &BuildSpec, ui: &Ui) -> crate::cli::error::Result<Post> {
        let epoch = self.env_source_date_epoch.as_ref().and_then(|t| t.to_str());
        Ok(Post {
            source_date_epoch: epoch.and_then(|t| t.trim().parse().ok()),
            gzip: self.gzip,
            ..Post::decide(self.no_verify, self.bundle, spec, ui)?
        })
    }
}
