//! Stage 6 of a substep: cloth–cloth collision (Bridson, Fedkiw & Anderson 2002: proximity
//! impulses, continuous collision, rigid impact zones) makes x0 → x1 crossing-free, with every
//! vertex a body holds this substep treated as immovable.

use crate::report::StageTimes;
use crate::state::State;
use crate::workspace::Workspace;

/// Returns (contacts + collisions handled, collisions left unresolved, whether the stage stopped
/// at its work bound, [`crate::self_collision::MAX_COLLISIONS_PER_VERTEX`]); None without
/// self-collision.
pub(crate) fn run(
    state: &mut State,
    ws: &mut Workspace,
    h: f32,
    times: &mut StageTimes,
) -> Option<(u32, u32, bool)> {
    let sc = ws.self_contact.as_mut()?;
    for c in &ws.constraints.active {
        ws.held[c.vertex as usize] = true;
    }
    let r = sc.apply(
        &ws.start.x,
        &mut state.x,
        &mut state.v,
        h,
        &ws.held,
        &ws.sub_colliders,
    );
    times.self_parts.add(&r.times);
    Some((r.contacts + r.collisions, r.unresolved, r.over_budget))
}
