//! The energies table: one CSV row per output time, flushed as it is written.

use super::{ConstraintGap, ContactRecord, EnergyRecord};
use crate::error::{HookeError, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Appends [`EnergyRecord`]s to a CSV file.
#[derive(Debug)]
pub struct EnergiesCsvWriter {
    path: PathBuf,
    file: BufWriter<File>,
    rows: usize,
    /// The column groups after the common ones.
    columns: OptionalColumns,
}

/// The column groups a table may carry after [`EnergiesCsvWriter::HEADER`],
/// in this order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OptionalColumns {
    /// [`EnergiesCsvWriter::CONSTRAINT_GAP_COLUMNS`] (mixed FEM).
    pub constraint_gap: bool,
    /// [`EnergiesCsvWriter::CONTACT_COLUMNS`] (barrier contact).
    pub contact: bool,
}

impl OptionalColumns {
    /// The groups a record fills.
    pub fn of(record: &EnergyRecord) -> OptionalColumns {
        OptionalColumns {
            constraint_gap: record.constraint_gap.is_some(),
            contact: record.contact.is_some(),
        }
    }

    fn all() -> impl Iterator<Item = OptionalColumns> {
        [false, true].into_iter().flat_map(|constraint_gap| {
            [false, true].map(|contact| OptionalColumns {
                constraint_gap,
                contact,
            })
        })
    }
}

impl EnergiesCsvWriter {
    /// The first line of every energies file.
    pub const HEADER: &'static str = "time,kinetic,elastic,gravitational,penalty,total,dissipated,\
        linear_momentum_x,linear_momentum_y,linear_momentum_z,\
        angular_momentum_x,angular_momentum_y,angular_momentum_z,max_penetration";

    /// The columns that follow [`Self::HEADER`] in the table of a run by a
    /// solver with stretch unknowns (mixed FEM; see [`ConstraintGap`]).
    pub const CONSTRAINT_GAP_COLUMNS: &'static str = "constraint_gap_largest,constraint_gap_mean";

    /// The columns of a run with barrier contact (see [`ContactRecord`]),
    /// after the constraint gap's when both are there.
    pub const CONTACT_COLUMNS: &'static str = "contact_distance_smallest,contact_pairs";

    /// Creates (or truncates) the file at `path`, creating missing parent
    /// directories, and writes the header.
    pub fn create(path: &Path) -> Result<Self> {
        Self::create_with(path, OptionalColumns::default())
    }

    /// [`Self::create`], with the optional column groups `columns`.
    pub fn create_with(path: &Path, columns: OptionalColumns) -> Result<Self> {
        if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|error| HookeError::io(parent, error))?;
        }
        let file = File::create(path).map_err(|error| HookeError::io(path, error))?;
        let mut writer = EnergiesCsvWriter {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
            rows: 0,
            columns,
        };
        writer.write_line(&header(columns))?;
        Ok(writer)
    }

    /// Reopens the table of an interrupted run to go on from its first `rows`
    /// data rows: later rows (steps taken after the checkpoint) are dropped,
    /// and the kept ones are returned as records.
    pub fn resume(path: &Path, rows: usize) -> Result<(Self, Vec<EnergyRecord>)> {
        let text = std::fs::read_to_string(path).map_err(|error| HookeError::io(path, error))?;
        let mut lines = text.lines();
        let first = lines.next();
        let Some(columns) = OptionalColumns::all().find(|&c| first == Some(header(c).as_str())) else {
            return Err(HookeError::parse(
                path,
                Some(1),
                "not an energies table of this version of Hooke",
            ));
        };
        // The file bounds what the checkpoint may claim: count before
        // reserving, so a corrupted count is an error, not an allocation of it.
        let available = text.lines().count().saturating_sub(1);
        if rows > available {
            return Err(HookeError::parse(
                path,
                None,
                format!("holds {available} rows, but the checkpoint counts {rows}"),
            ));
        }
        let mut records = Vec::with_capacity(rows);
        let mut kept = format!("{}\n", header(columns));
        for (index, line) in lines.take(rows).enumerate() {
            records.push(
                parse_row(line, columns).ok_or_else(|| HookeError::parse(path, Some(index + 2), "malformed row"))?,
            );
            kept.push_str(line);
            kept.push('\n');
        }
        if records.len() < rows {
            return Err(HookeError::parse(
                path,
                None,
                format!("holds {} rows, but the checkpoint counts {rows}", records.len()),
            ));
        }
        super::atomic::write_bytes_atomically(path, kept.as_bytes())?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|error| HookeError::io(path, error))?;
        let writer = EnergiesCsvWriter {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
            rows,
            columns,
        };
        Ok((writer, records))
    }

    /// Path of the CSV file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of data rows written so far (the header not counted).
    pub fn rows_written(&self) -> usize {
        self.rows
    }

    /// Writes one row and flushes it, so an interrupted run keeps every row
    /// appended before the interruption.
    pub fn append(&mut self, record: &EnergyRecord) -> Result<()> {
        let [px, py, pz] = record.linear_momentum;
        let [lx, ly, lz] = record.angular_momentum;
        let values = [
            record.time,
            record.kinetic,
            record.elastic,
            record.gravitational,
            record.penalty,
            record.total,
            record.dissipated,
            px,
            py,
            pz,
            lx,
            ly,
            lz,
            record.max_penetration,
        ];
        let gap = record.constraint_gap.unwrap_or_default();
        let gap_values = [gap.largest, gap.mean];
        let contact = record.contact.unwrap_or_default();
        let contact_values = [contact.smallest_distance, contact.active_pairs as f64];
        let values = values
            .iter()
            .chain(if self.columns.constraint_gap {
                &gap_values[..]
            } else {
                &[]
            })
            .chain(if self.columns.contact { &contact_values[..] } else { &[] });
        // `{:e}` is the shortest text that parses back to the same f64, and it
        // stays short for the tiny momenta of a body at rest.
        let row = values.map(|value| format!("{value:e}")).collect::<Vec<_>>().join(",");
        self.write_line(&row)?;
        self.rows += 1;
        Ok(())
    }

    fn write_line(&mut self, line: &str) -> Result<()> {
        let path = &self.path;
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.write_all(b"\n"))
            .and_then(|()| self.file.flush())
            .map_err(|error| HookeError::io(path, error))
    }
}

/// The first line of a table with the optional column groups `columns`.
fn header(columns: OptionalColumns) -> String {
    let mut header = EnergiesCsvWriter::HEADER.to_string();
    for (on, group) in [
        (columns.constraint_gap, EnergiesCsvWriter::CONSTRAINT_GAP_COLUMNS),
        (columns.contact, EnergiesCsvWriter::CONTACT_COLUMNS),
    ] {
        if on {
            header.push(',');
            header.push_str(group);
        }
    }
    header
}

/// A data row back as a record (the inverse of [`EnergiesCsvWriter::append`]).
fn parse_row(line: &str, columns: OptionalColumns) -> Option<EnergyRecord> {
    let values: Vec<f64> = line.split(',').map(|word| word.parse().ok()).collect::<Option<_>>()?;
    let values = values.as_slice();
    let (values, contact) = match columns.contact {
        true => {
            let &[ref first @ .., smallest_distance, pairs] = values else {
                return None;
            };
            let active_pairs = (pairs >= 0.0 && pairs.fract() == 0.0).then_some(pairs as usize)?;
            (
                first,
                Some(ContactRecord {
                    smallest_distance,
                    active_pairs,
                }),
            )
        }
        false => (values, None),
    };
    let (values, gap) = match columns.constraint_gap {
        true => {
            let &[ref first @ .., largest, mean] = values else {
                return None;
            };
            (first, Some(ConstraintGap { largest, mean }))
        }
        false => (values, None),
    };
    let &[time, kinetic, elastic, gravitational, penalty, total, dissipated, px, py, pz, lx, ly, lz, max_penetration] =
        values
    else {
        return None;
    };
    Some(EnergyRecord {
        time,
        kinetic,
        elastic,
        gravitational,
        penalty,
        total,
        dissipated,
        linear_momentum: [px, py, pz],
        angular_momentum: [lx, ly, lz],
        max_penetration,
        constraint_gap: gap,
        contact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(step: usize) -> EnergyRecord {
        let time = 1e-3 * step as f64;
        let kinetic = 0.5 * step as f64;
        let elastic = 1.0 / 3.0 + step as f64;
        let gravitational = -9.81 * time;
        EnergyRecord {
            time,
            kinetic,
            elastic,
            gravitational,
            penalty: 0.25 * time,
            total: kinetic + elastic + gravitational + 0.25 * time,
            dissipated: 0.125 * time,
            linear_momentum: [1.25e-17, -2.0, 3.0],
            angular_momentum: [0.0, f64::MIN_POSITIVE, -7.5e12],
            max_penetration: 1e-3 * time,
            constraint_gap: None,
            contact: None,
        }
    }

    fn as_row(record: &EnergyRecord) -> Vec<f64> {
        let mut row = vec![
            record.time,
            record.kinetic,
            record.elastic,
            record.gravitational,
            record.penalty,
            record.total,
            record.dissipated,
        ];
        row.extend(record.linear_momentum);
        row.extend(record.angular_momentum);
        row.push(record.max_penetration);
        row
    }

    #[test]
    fn rows_parse_back_to_the_records() {
        let directory = crate::output::scratch_directory("energies");
        let path = directory.join("nested").join("energies.csv");
        let records: Vec<EnergyRecord> = (0..5).map(record).collect();

        let mut writer = EnergiesCsvWriter::create(&path).expect("create csv");
        for record in &records {
            writer.append(record).expect("append row");
        }
        assert_eq!(writer.rows_written(), records.len());

        // Read while the writer is still open: rows must already be on disk.
        let text = std::fs::read_to_string(&path).expect("read csv");
        let mut lines = text.lines();
        let header = lines.next().expect("header line");
        assert_eq!(header, EnergiesCsvWriter::HEADER);
        assert_eq!(header.split(',').count(), 14);
        assert_eq!(header.split(',').nth(12), Some("angular_momentum_z"));

        let rows: Vec<Vec<f64>> = lines
            .map(|line| {
                line.split(',')
                    .map(|field| field.parse::<f64>().expect("numeric field"))
                    .collect()
            })
            .collect();
        assert_eq!(rows.len(), records.len());
        for (row, record) in rows.iter().zip(&records) {
            // Bit-exact: the text keeps full precision.
            assert_eq!(row, &as_row(record));
        }

        drop(writer);
        let _ = std::fs::remove_dir_all(&directory);
    }

    /// A resumed table keeps the first rows exactly, drops the rest, and
    /// appends after them.
    #[test]
    fn a_resumed_table_goes_on_from_the_checkpoint_row() {
        let directory = crate::output::scratch_directory("energies-resume");
        let path = directory.join("energies.csv");
        let records: Vec<EnergyRecord> = (0..6).map(record).collect();
        let mut writer = EnergiesCsvWriter::create(&path).unwrap();
        for record in &records {
            writer.append(record).unwrap();
        }
        drop(writer);
        let (mut writer, kept) = EnergiesCsvWriter::resume(&path, 4).unwrap();
        assert_eq!(
            kept.iter().map(as_row).collect::<Vec<_>>(),
            records[..4].iter().map(as_row).collect::<Vec<_>>()
        );
        writer.append(&records[5]).unwrap();
        drop(writer);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 1 + 5);
        assert!(text
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("{:e},", records[5].time)));
        assert!(EnergiesCsvWriter::resume(&path, 9).is_err());
        // A corrupted checkpoint's count is refused before anything is reserved for it.
        let error = EnergiesCsvWriter::resume(&path, 1_000_000_000_000_000).unwrap_err();
        assert!(error.to_string().contains("holds 5 rows"), "{error}");
        let _ = std::fs::remove_dir_all(&directory);
    }

    /// A mixed solver's table carries the two gap columns, and a resumed one
    /// reads them back exactly.
    #[test]
    fn the_constraint_gap_columns_are_written_and_resumed() {
        let directory = crate::output::scratch_directory("energies-gap");
        let path = directory.join("energies.csv");
        let records: Vec<EnergyRecord> = (0..3)
            .map(|step| EnergyRecord {
                constraint_gap: Some(ConstraintGap {
                    largest: 0.02 * step as f64 + 1.0 / 3.0,
                    mean: 1e-3 * step as f64,
                }),
                ..record(step)
            })
            .collect();
        let columns = OptionalColumns {
            constraint_gap: true,
            contact: false,
        };
        let mut writer = EnergiesCsvWriter::create_with(&path, columns).unwrap();
        for record in &records {
            writer.append(record).unwrap();
        }
        drop(writer);
        let text = std::fs::read_to_string(&path).unwrap();
        let header = text.lines().next().unwrap();
        assert!(
            header.ends_with(",max_penetration,constraint_gap_largest,constraint_gap_mean"),
            "{header}"
        );
        assert_eq!(text.lines().nth(1).unwrap().split(',').count(), 16);
        let (_, kept) = EnergiesCsvWriter::resume(&path, 2).unwrap();
        assert_eq!(kept[1].constraint_gap, records[1].constraint_gap);
        assert_eq!(as_row(&kept[1]), as_row(&records[1]));
        // A table without the columns reads back without a gap.
        let plain = directory.join("plain.csv");
        let mut writer = EnergiesCsvWriter::create(&plain).unwrap();
        writer.append(&records[2]).unwrap();
        drop(writer);
        let (_, kept) = EnergiesCsvWriter::resume(&plain, 1).unwrap();
        assert_eq!(kept[0].constraint_gap, None);
        let _ = std::fs::remove_dir_all(&directory);
    }

    /// A contact run's table carries the smallest distance and the pair
    /// count after the gap columns; no pair within reach is an infinite distance.
    #[test]
    fn the_contact_columns_are_written_and_resumed_after_the_gap_columns() {
        let directory = crate::output::scratch_directory("energies-contact");
        let path = directory.join("energies.csv");
        let records: Vec<EnergyRecord> = (0..3)
            .map(|step| EnergyRecord {
                constraint_gap: Some(ConstraintGap {
                    largest: 0.5,
                    mean: 0.25,
                }),
                contact: Some(ContactRecord {
                    smallest_distance: if step == 0 { f64::INFINITY } else { 1e-4 / step as f64 },
                    active_pairs: 7 * step,
                }),
                ..record(step)
            })
            .collect();
        let columns = OptionalColumns::of(&records[0]);
        let mut writer = EnergiesCsvWriter::create_with(&path, columns).unwrap();
        for record in &records {
            writer.append(record).unwrap();
        }
        drop(writer);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.lines().next().unwrap().ends_with(
            ",max_penetration,constraint_gap_largest,constraint_gap_mean,contact_distance_smallest,contact_pairs"
        ));
        let (_, kept) = EnergiesCsvWriter::resume(&path, 3).unwrap();
        for (kept, written) in kept.iter().zip(&records) {
            assert_eq!(kept.contact, written.contact);
            assert_eq!(kept.constraint_gap, written.constraint_gap);
        }
        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn non_finite_values_are_written_and_read_back() {
        let directory = crate::output::scratch_directory("energies-non-finite");
        let path = directory.join("energies.csv");
        let mut writer = EnergiesCsvWriter::create(&path).expect("create csv");
        let record = EnergyRecord {
            kinetic: f64::NAN,
            elastic: f64::INFINITY,
            ..EnergyRecord::default()
        };
        writer.append(&record).expect("append row");

        let text = std::fs::read_to_string(&path).expect("read csv");
        let row: Vec<f64> = text
            .lines()
            .nth(1)
            .expect("data row")
            .split(',')
            .map(|field| field.parse().expect("numeric field"))
            .collect();
        assert!(row[1].is_nan());
        assert_eq!(row[2], f64::INFINITY);

        drop(writer);
        let _ = std::fs::remove_dir_all(&directory);
    }

    #[test]
    fn unwritable_path_is_an_io_error() {
        let directory = crate::output::scratch_directory("energies-unwritable");
        std::fs::create_dir_all(&directory).expect("create dir");
        // A directory cannot be opened as a file.
        let error = EnergiesCsvWriter::create(&directory).expect_err("path is a directory");
        assert!(matches!(error, HookeError::Io { .. }), "{error}");
        let _ = std::fs::remove_dir_all(&directory);
    }
}
