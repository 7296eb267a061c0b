//! The searchable field groups of SPEC §1 and their fixed weights.

/// A searchable field group. Each group has a fixed weight and a stable position (`as usize`)
/// used for bit masks and per-group columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FieldGroup {
    /// `tags`
    Tags = 0,
    /// `title`
    Title = 1,
    /// `problems`
    Problems = 2,
    /// `task`
    Task = 3,
    /// `solution` and `whyItWorked`
    Solution = 4,
    /// `projectContext`
    ProjectContext = 5,
    /// `applicability`
    Applicability = 6,
    /// `failedAttempts`
    FailedAttempts = 7,
    /// `warnings`
    Warnings = 8,
}

/// The number of field groups.
pub const GROUP_COUNT: usize = 9;

impl FieldGroup {
    /// Every group, in SPEC order (the order of `scoreBreakdown`).
    pub const ALL: [FieldGroup; GROUP_COUNT] = [
        FieldGroup::Tags,
        FieldGroup::Title,
        FieldGroup::Problems,
        FieldGroup::Task,
        FieldGroup::Solution,
        FieldGroup::ProjectContext,
        FieldGroup::Applicability,
        FieldGroup::FailedAttempts,
        FieldGroup::Warnings,
    ];

    /// The group's fixed weight.
    pub const fn weight(self) -> u32 {
        match self {
            FieldGroup::Tags => 9,
            FieldGroup::Title => 8,
            FieldGroup::Problems => 7,
            FieldGroup::Task => 5,
            FieldGroup::Solution | FieldGroup::ProjectContext | FieldGroup::Applicability => 4,
            FieldGroup::FailedAttempts => 3,
            FieldGroup::Warnings => 2,
        }
    }

    /// The group's name as it appears in `scoreBreakdown`.
    pub const fn name(self) -> &'static str {
        match self {
            FieldGroup::Tags => "tags",
            FieldGroup::Title => "title",
            FieldGroup::Problems => "problems",
            FieldGroup::Task => "task",
            FieldGroup::Solution => "solution",
            FieldGroup::ProjectContext => "projectContext",
            FieldGroup::Applicability => "applicability",
            FieldGroup::FailedAttempts => "failedAttempts",
            FieldGroup::Warnings => "warnings",
        }
    }

    /// The group at position `index`, if any.
    pub fn from_index(index: usize) -> Option<FieldGroup> {
        FieldGroup::ALL.get(index).copied()
    }

    /// This group's bit in a group mask.
    pub const fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// `Σ weight[g]` over the groups of a group mask, by mask: one lookup per record and token
/// when accumulating a query.
pub static MASK_WEIGHTS: [u32; 1 << GROUP_COUNT] = {
    let mut table = [0u32; 1 << GROUP_COUNT];
    let mut mask = 0;
    while mask < table.len() {
        let mut g = 0;
        while g < GROUP_COUNT {
            if mask & (1 << g) != 0 {
                table[mask] += FieldGroup::ALL[g].weight();
            }
            g += 1;
        }
        mask += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_weights_sum_the_groups() {
        assert_eq!(MASK_WEIGHTS[0], 0);
        assert_eq!(MASK_WEIGHTS[FieldGroup::Tags.bit() as usize], 9);
        let all: u32 = FieldGroup::ALL.iter().map(|g| g.weight()).sum();
        assert_eq!(MASK_WEIGHTS[(1 << GROUP_COUNT) - 1], all);
        let title_and_warnings = (FieldGroup::Title.bit() | FieldGroup::Warnings.bit()) as usize;
        assert_eq!(MASK_WEIGHTS[title_and_warnings], 10);
    }
}
