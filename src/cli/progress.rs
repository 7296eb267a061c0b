//! The build's progress bar on stderr (feature `progress-bar`), drawn from the library's
//! [`Progress`](reliora::Progress) reports.

/// A progress bar for `build`, or `None` without the feature.
#[cfg(feature = "progress-bar")]
pub fn bar() -> Option<reliora::OnProgress> {
    use indicatif::{ProgressBar, ProgressStyle};
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} indexing {pos} records {elapsed}")
            .expect("valid template"),
    );
    Some(reliora::OnProgress::new(move |progress| {
        if progress.finished {
            bar.finish_and_clear();
            return;
        }
        if let Some(total) = progress.total {
            if bar.length() != Some(total) {
                bar.set_length(total);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} indexing {pos}/{len} records {wide_bar} {eta}",
                    )
                    .expect("valid template"),
                );
            }
        }
        bar.set_position(progress.done);
    }))
}

/// A progress bar for `build`, or `None` without the feature.
#[cfg(not(feature = "progress-bar"))]
pub fn bar() -> Option<reliora::OnProgress> {
    None
}
