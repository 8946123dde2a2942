//! The one font of plots and picture captions: DejaVu Sans, embedded, so text
//! draws the same on every machine.

use plotters::style::FontStyle;
use std::sync::OnceLock;

pub(super) const FONT_FAMILY: &str = "sans-serif";

/// Registers DejaVu Sans once for the process; plotters' `ab_glyph` renderer
/// finds no font otherwise.
pub(super) fn register_embedded_font() -> std::result::Result<(), String> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT_FAMILY, FontStyle::Normal, dejavu::sans::regular())
                .map_err(|_| "the embedded DejaVu Sans font could not be loaded".to_string())
        })
        .clone()
}
