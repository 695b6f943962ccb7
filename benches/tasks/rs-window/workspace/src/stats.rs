//! Small numeric helpers for the dashboard's charts.

/// Mean of `values`, or `None` when there are none.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// The mean of every run of `width` consecutive values, in order.
/// Empty when `width` is 0 or larger than the input.
pub fn moving_average(values: &[f64], width: usize) -> Vec<f64> {
    if width == 0 || width > values.len() {
        return Vec::new();
    }
    (0..values.len() - width)
        .map(|start| mean(&values[start..start + width]).unwrap())
        .collect()
}

/// Largest value, or `None` when there are none.
pub fn peak(values: &[f64]) -> Option<f64> {
    values.iter().copied().fold(None, |best, v| Some(best.map_or(v, |b: f64| b.max(v))))
}
