//! The GCX1 decoder's limits as flags of `decode`, `validate` and `encode`: with the same
//! flags, `decode` and `validate` read everything `encode` writes (the encoder refuses what a
//! decoder with these limits would refuse). Without them, the library's defaults.

use agentwire_gcx1::Limits;

/// `--gcx1-max-*`: one flag per limit of `agentwire_gcx1::Limits`.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
#[command(next_help_heading = "GCX1 limits")]
pub(crate) struct Gcx1Limits {
    /// GCX1: the longest line in bytes, without its LF (default 4194304, 4 MiB, as Gortex's
    /// Go decoder).
    #[arg(long, value_name = "BYTES")]
    gcx1_max_line_length: Option<usize>,
    /// GCX1: the most fields one header may declare (default 4096).
    #[arg(long, value_name = "N")]
    gcx1_max_fields: Option<usize>,
    /// GCX1: the most meta pairs one header may carry (default 1024).
    #[arg(long, value_name = "N")]
    gcx1_max_meta: Option<usize>,
    /// GCX1: the most trailing cells rows may omit, in total (default 1048576).
    #[arg(long, value_name = "CELLS")]
    gcx1_max_padding: Option<u64>,
}

impl Gcx1Limits {
    /// The limits: the defaults, with each flag given.
    pub(crate) fn limits(&self) -> Limits {
        let mut limits = Limits::default();
        if let Some(bytes) = self.gcx1_max_line_length {
            limits = limits.with_max_line_length(bytes);
        }
        if let Some(fields) = self.gcx1_max_fields {
            limits = limits.with_max_fields(fields);
        }
        if let Some(pairs) = self.gcx1_max_meta {
            limits = limits.with_max_meta(pairs);
        }
        if let Some(cells) = self.gcx1_max_padding {
            limits = limits.with_max_padding(cells);
        }
        limits
    }

    /// Whether any flag was given (they apply to GCX1 only).
    pub(crate) fn any(&self) -> bool {
        self.gcx1_max_line_length.is_some()
            || self.gcx1_max_fields.is_some()
            || self.gcx1_max_meta.is_some()
            || self.gcx1_max_padding.is_some()
    }
}
