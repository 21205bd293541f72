fn main() -> std::process::ExitCode {
    timeline::mcp::main()
}
