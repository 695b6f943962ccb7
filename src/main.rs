//! The `tack` binary: a thin shell over the library's front ends.

fn main() -> std::process::ExitCode {
    tack::cli::main()
}
