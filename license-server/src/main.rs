fn main() {
    eprintln!("spotbot-license-server is not built yet");
    std::process::exit(2);
}
