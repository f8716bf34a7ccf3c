//! Runs the generated client and informer against an embedded `TestApiServer`:
//!
//! ```text
//! cargo run -p crd-codegen
//! ```

#[tokio::main]
async fn main() -> Result<(), crd_codegen::Error> {
    let mut out = std::io::stdout();
    crd_codegen::run(&mut out).await?;
    Ok(())
}
