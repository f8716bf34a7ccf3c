//! `kinform-gen` command line: typed clients, listers and informers (and, for CRDs, the types)
//! from CRD YAML or Kubernetes OpenAPI specs, written as a module tree.
//!
//! ```text
//! kinform-gen crd <files or dirs>... --out DIR [options]
//! kinform-gen openapi <swagger.json | v3 dir>... --out DIR [--group G]... [--version V]...
//!     [--runtime-crate ::kinform] [--k8s-openapi-crate PATH] [--root-file mod.rs]
//!     [--feature-per-group] [--root-doc-include ../README.md] [--check]
//!     [--later-spec v1.36/swagger.json]... [--later-k8s-openapi-sources k8s-openapi/src/v1_37]...
//! kinform-gen in-place <swagger.json | k8s-openapi's src/v1_XX> --kubernetes 1.XX --out FILE
//!     [--check]
//! ```
//!
//! `in-place` writes the in-place decoders of k8s-openapi's types that kinform-client keeps
//! in `client/src/decode/in_place/k8s_1_XX.rs`, one file per Kubernetes version, from that
//! version's OpenAPI spec or, where there is none, from k8s-openapi's sources of it (see
//! `kinform_codegen::emit_in_place_decoders`).
//!
//! `--check` writes nothing and exits with status 1, listing the files of DIR that are out of
//! date, when generating would change DIR. Errors exit with status 2, among them a run that
//! leaves nothing to generate. What the inputs hold but the output leaves out (documents that
//! are not CRDs, files that are not YAML, unserved versions, filters that match nothing) and
//! deprecated versions are printed as `kinform-gen: warning: ...` lines on stderr, one a
//! warning, or one counting them where a kind of warning comes more than three times.

use std::path::PathBuf;
use std::process::ExitCode;

/// The allocator: generation allocates and frees millions of small values (YAML nodes,
/// tokens, syntax trees), which mimalloc serves in a fraction of glibc malloc's time (a third
/// of a run went to malloc and free). Considered: the system allocator, jemalloc
/// (tikv-jemallocator: a longer build for the same gain).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Args, Parser, Subcommand};
use kinform_codegen::{Generator, Layout, Warning};

#[derive(Parser)]
#[command(
    name = "kinform-gen",
    version,
    about = "Generate kinform clients, listers and informers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// From CustomResourceDefinition YAML: files or directories (read recursively).
    Crd {
        /// CRD files or directories.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// From Kubernetes OpenAPI specs: a swagger.json (v2), or a directory of v3 documents.
    Openapi {
        /// Spec files or directories.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// The spec of a later Kubernetes version: its resources the inputs lack are added,
        /// each gated by the versions whose k8s-openapi has its type; repeatable, oldest first.
        #[arg(long = "later-spec", value_name = "SPEC")]
        later_specs: Vec<PathBuf>,
        /// k8s-openapi's sources of a later version (its `src/v1_XX`), read after the specs
        /// for a version without one (verbs: see `Generator::later_k8s_openapi_sources`).
        #[arg(long = "later-k8s-openapi-sources", value_name = "DIR")]
        later_sources: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// kinform-client's in-place decoders of k8s-openapi's types, from a swagger.json or
    /// from k8s-openapi's sources of the version.
    InPlace {
        /// The version's spec file, or k8s-openapi's `src/v1_XX` directory.
        input: PathBuf,
        /// The Kubernetes version the input describes (`1.36`).
        #[arg(long)]
        kubernetes: String,
        /// Output file.
        #[arg(long)]
        out: PathBuf,
        /// Write nothing; exit 1 when the file is out of date.
        #[arg(long)]
        check: bool,
    },
}

#[derive(Args)]
struct Common {
    /// Output directory.
    #[arg(long)]
    out: PathBuf,
    /// Only this API group (`core` for the core group); repeatable.
    #[arg(long = "group")]
    groups: Vec<String>,
    /// Only this version (`v1` or `group/v1`); repeatable.
    #[arg(long = "version")]
    versions: Vec<String>,
    /// Path of the runtime crate in emitted code.
    #[arg(long, default_value = "::kinform")]
    runtime_crate: String,
    /// Path of k8s-openapi in emitted code (default: `<runtime-crate>::k8s_openapi`).
    #[arg(long)]
    k8s_openapi_crate: Option<String>,
    /// File name of the root module (`mod.rs`, or `lib.rs` for a crate's src/).
    #[arg(long, default_value = "mod.rs")]
    root_file: String,
    /// Gate each group behind a Cargo feature named like its module.
    #[arg(long)]
    feature_per_group: bool,
    /// Leave out CRD kinds' apply configurations (`<kind>::apply`, `FooApply`).
    #[arg(long)]
    no_apply_configurations: bool,
    /// Root module docs: `#![doc = include_str!(PATH)]` (PATH relative to the root file)
    /// instead of the generated text.
    #[arg(long, value_name = "PATH")]
    root_doc_include: Option<String>,
    /// Write nothing; exit 1 listing the files that are out of date.
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut generator = Generator::new();
    match cli.command {
        Command::Crd { inputs, common } => {
            for input in &inputs {
                generator = generator.crd(input);
            }
            run(generator, common)
        }
        Command::Openapi {
            inputs,
            later_specs,
            later_sources,
            common,
        } => {
            for input in &inputs {
                generator = generator.openapi(input);
            }
            for spec in &later_specs {
                generator = generator.later_openapi(spec);
            }
            for dir in &later_sources {
                generator = generator.later_k8s_openapi_sources(dir);
            }
            run(generator, common)
        }
        Command::InPlace {
            input,
            kubernetes,
            out,
            check,
        } => in_place(&input, &kubernetes, &out, check),
    }
}

fn in_place(
    input: &std::path::Path,
    kubernetes: &str,
    out: &std::path::Path,
    check: bool,
) -> ExitCode {
    let code = match kinform_codegen::emit_in_place_decoders(input, kubernetes) {
        Ok(code) => code,
        Err(e) => return fail(&e),
    };
    if check {
        if std::fs::read_to_string(out).ok().as_deref() == Some(code.as_str()) {
            return ExitCode::SUCCESS;
        }
        eprintln!("kinform-gen: 1 file(s) out of date:\n  {}", out.display());
        return ExitCode::from(1);
    }
    match std::fs::write(out, code) {
        Ok(()) => {
            println!("kinform-gen: 1 file(s) in {}", out.display());
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

fn run(mut generator: Generator, common: Common) -> ExitCode {
    for g in common.groups {
        generator = generator.group(g);
    }
    for v in common.versions {
        generator = generator.version(v);
    }
    if let Some(path) = common.root_doc_include {
        generator = generator.root_doc_include(path);
    }
    if let Some(k8s) = common.k8s_openapi_crate {
        generator = generator.k8s_openapi_crate(k8s);
    }
    let generator = generator
        .out_dir(&common.out)
        .runtime_crate(common.runtime_crate)
        .feature_per_group(common.feature_per_group)
        .apply_configurations(!common.no_apply_configurations)
        .layout(Layout::Tree {
            root_file: common.root_file,
        });
    if common.check {
        match generator.check_report() {
            Ok(report) => {
                warn(&report.warnings);
                if report.files.is_empty() {
                    return ExitCode::SUCCESS;
                }
                eprintln!("kinform-gen: {} file(s) out of date:", report.files.len());
                for path in report.files {
                    eprintln!("  {}", path.display());
                }
                ExitCode::from(1)
            }
            Err(e) => fail(&e),
        }
    } else {
        match generator.generate_report() {
            Ok(report) => {
                warn(&report.warnings);
                println!(
                    "kinform-gen: {} file(s) in {}",
                    report.files.len(),
                    common.out.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        }
    }
}

/// Prints what the run left out on stderr, one warning a line, counted by kind where there
/// are many ([`kinform_codegen::generator::summarize`]).
fn warn(warnings: &[Warning]) {
    for line in kinform_codegen::generator::summarize(warnings) {
        eprintln!("kinform-gen: warning: {line}");
    }
}

fn fail(e: &dyn std::error::Error) -> ExitCode {
    eprintln!("kinform-gen: error: {e}");
    let mut source = e.source();
    while let Some(s) = source {
        eprintln!("  caused by: {s}");
        source = s.source();
    }
    ExitCode::from(2)
}
