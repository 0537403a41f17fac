fn main() {
    println!("clothbake: under construction");
}
