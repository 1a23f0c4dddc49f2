fn main() {
    eprintln!("spotbot-sim is not built yet");
    std::process::exit(2);
}
