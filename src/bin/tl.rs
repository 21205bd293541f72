fn main() -> std::process::ExitCode {
    timeline::cli::main()
}
