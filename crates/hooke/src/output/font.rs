//! The one font of plots and picture captions: DejaVu Sans, embedded, so text
//! draws the same on every machine.

pub(super) const FONT_FAMILY: &str = "sans-serif";

/// Registers DejaVu Sans once for the process; plotters' `ab_glyph` renderer
/// finds no font otherwise.
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn register_embedded_font() -> std::result::Result<(), String> {
    use plotters::style::FontStyle;
    use std::sync::OnceLock;
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, dejavu::sans::regular())
                .map_err(|_| "the embedded DejaVu Sans font could not be loaded".to_string())
        })
        .clone()
}

/// On WebAssembly plotters draws text through a browser canvas, which a bitmap
/// plot has not got, so plots are refused there (the page draws its own).
#[cfg(target_arch = "wasm32")]
pub(super) fn register_embedded_font() -> std::result::Result<(), String> {
    Err("plots are not drawn in the WebAssembly build".to_string())
}
