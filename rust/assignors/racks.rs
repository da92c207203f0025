//! Racks: which rack each member is in and which racks hold a replica of each partition, as
//! dense ids for the rack-aware parts of the assignors (KIP-881).

use std::collections::HashMap;

use super::model::Model;

pub(crate) struct Racks {
    /// Rack id of each member (input order); `None` without a rack or with an empty one.
    pub member_rack: Vec<Option<u32>>,
    /// Sorted rack ids holding a replica of each partition (global index); empty when unknown.
    pub partition_racks: Vec<Vec<u32>>,
    pub num_racks: usize,
}

impl Racks {
    /// new returns `None` when no partition racks were given or no member has a rack: then
    /// nothing is rack-aware, as in Java.
    pub fn new<'a>(model: &Model<'a>) -> Option<Racks> {
        let input = model.input;
        let given = input.partition_racks.as_ref()?;
        let mut ids: HashMap<&'a str, u32> = HashMap::new();
        fn intern<'a>(s: &'a str, ids: &mut HashMap<&'a str, u32>) -> u32 {
            let n = ids.len() as u32;
            *ids.entry(s).or_insert(n)
        }
        let member_rack: Vec<Option<u32>> = input
            .members
            .iter()
            .map(|m| {
                m.subscription
                    .rack_id
                    .as_deref()
                    .filter(|r| !r.is_empty())
                    .map(|r| intern(r, &mut ids))
            })
            .collect();
        if member_rack.iter().all(Option::is_none) {
            return None;
        }
        let mut partition_racks = vec![Vec::new(); model.total()];
        for (tp, racks) in given {
            if let Some(i) = model.lookup(&tp.topic, tp.partition) {
                let mut v: Vec<u32> = racks.iter().map(|r| intern(r, &mut ids)).collect();
                v.sort_unstable();
                v.dedup();
                partition_racks[i as usize] = v;
            }
        }
        Some(Racks {
            member_rack,
            partition_racks,
            num_racks: ids.len(),
        })
    }

    /// holds says whether partition `index` has a replica on `rack`.
    #[inline]
    pub fn holds(&self, index: u32, rack: u32) -> bool {
        self.partition_racks[index as usize]
            .binary_search(&rack)
            .is_ok()
    }
}
