//! The Newton loop does not allocate once it has seen a contact pattern (DESIGN "hot loops do
//! not allocate"), and neither does the whole step. A counting global allocator, in its own
//! test binary so it counts nothing else: the first solve of a pattern may allocate (block
//! storage, symbolic analysis); the next steps with the same pattern must not, for the dense
//! and the sparse factorization, a simulator's solve split into contact islands on rayon's
//! threads, and a simulator's whole step (`Simulator::step_into`) on the clutter and the
//! falling sphere.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use nalgebra::DVector;

use stiction::problem::load_problem;
use stiction::solver::linalg::{BlockPattern, LinearSolver};
use stiction::solver::{ConvexProblem, NewtonWorkspace};
use stiction::step::{Simulator, State, StepReport};

/// The system allocator, counting the allocations of the threads that ask for it (the
/// test's own; rayon's workers from the parallel narrow phase of the steps in between may
/// still be winding down), and those of the threads of the islands test's own rayon pool
/// while that test counts.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is one of the islands test's pool.
    static IN_POOL: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is one of the whole-step test's pools.
    static IN_STEP_POOL: Cell<bool> = const { Cell::new(false) };
}

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// Whether the islands test counts its pool's allocations.
static POOL_COUNTING: AtomicBool = AtomicBool::new(false);
static POOL_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// The same for the whole-step test's pools, apart: the tests run at the same time.
static STEP_POOL_COUNTING: AtomicBool = AtomicBool::new(false);
static STEP_POOL_ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn count() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
    if POOL_COUNTING.load(Ordering::Relaxed) && IN_POOL.try_with(Cell::get).unwrap_or(false) {
        POOL_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
    if STEP_POOL_COUNTING.load(Ordering::Relaxed)
        && IN_STEP_POOL.try_with(Cell::get).unwrap_or(false)
    {
        STEP_POOL_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn newton_loop_does_not_allocate_after_the_first_step_of_a_pattern() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/clutter.toml");
    let mut p = load_problem(&path).expect("clutter loads");
    // Into the pile: the bottom layers are in contact after 0.25 s.
    let u = DVector::zeros(0);
    let mut state = p.initial_state.clone();
    for _ in 0..125 {
        state = p.simulator.step(&state, &u).expect("steps").0;
    }
    for linear_solver in [LinearSolver::Dense, LinearSolver::Sparse] {
        let mut params = p.simulator.settings.solver;
        params.linear_solver = linear_solver;
        let mut workspace = NewtonWorkspace::default();
        let mut s = state.clone();
        let mut counted = 0;
        for step in 0..20 {
            let problem = p.simulator.assemble(&s, &u).expect("assembles").problem;
            let seen = step > 0 && &problem_pattern(&problem) == workspace.pattern();
            workspace.prepare(&problem);
            let before = ALLOCATIONS.load(Ordering::Relaxed);
            COUNTING.with(|c| c.set(true));
            let stats = workspace.iterate(&problem, &s.v, &params);
            COUNTING.with(|c| c.set(false));
            let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
            let stats = stats.expect("solves");
            assert!(problem.nc() > 0 && stats.iterations > 0);
            if seen {
                assert_eq!(
                    allocations, 0,
                    "{linear_solver}: step {step} with a known pattern allocated"
                );
                counted += 1;
            }
            s = p.simulator.step(&s, &u).expect("steps").0;
        }
        assert!(
            counted >= 5,
            "{linear_solver}: only {counted} steps kept their pattern"
        );
        let factor = workspace.factor().expect("factored");
        assert_eq!(
            factor.cholesky.is_sparse(),
            linear_solver == LinearSolver::Sparse
        );
    }
}

/// The block pattern `problem` will have, read by preparing a scratch workspace.
fn problem_pattern(problem: &ConvexProblem<f64>) -> BlockPattern {
    let mut scratch = NewtonWorkspace::default();
    scratch.prepare(problem);
    scratch.pattern().clone()
}

/// A simulator's solve split into contact islands, each solved by its own Newton workspace on
/// rayon's threads, does not allocate once the contact graph has been seen: the split
/// (union–find over the cliques), each island's cut-out problem (its blocks of `A`, Jacobian
/// columns, potentials and rows, written into the island's buffers), the initial guesses, the
/// parallel Newton solves and the write-back of the solutions. The scene: the clutter settled
/// in its box (1.6 s), 17-18 islands. The split depends on the velocities (a contact apart
/// that stays open joins no island), so counted are the steps whose block pattern, number of
/// contacts and number of islands are the last step's: 22 of 24. Counted are the threads of a rayon
/// pool of two made for the test, which runs the solves; the test thread only hands the work
/// to it.
///
/// The whole step's claim is the next test's.
#[test]
fn island_solves_of_a_simulator_do_not_allocate_after_the_first_step_of_a_pattern() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/clutter.toml");
    let mut p = load_problem(&path).expect("clutter loads");
    let u = DVector::zeros(0);
    let mut state = p.initial_state.clone();
    for _ in 0..800 {
        state = p.simulator.step(&state, &u).expect("steps").0;
    }
    let params = p.simulator.settings.solver;
    assert!(params.islands, "islands are on by default");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(|_| IN_POOL.with(|c| c.set(true)))
        .build()
        .expect("a pool of two");
    every_thread_steals(&pool);
    let mut counted = 0;
    let mut seen: Option<(BlockPattern, usize, usize)> = None;
    for step in 0..24 {
        let problem = p.simulator.assemble(&state, &u).expect("assembles").problem;
        let (allocations, stats) = pool.install(|| {
            let before = POOL_ALLOCATIONS.load(Ordering::SeqCst);
            POOL_COUNTING.store(true, Ordering::SeqCst);
            let stats = p.simulator.solve(&problem, &state.v, &params);
            POOL_COUNTING.store(false, Ordering::SeqCst);
            (POOL_ALLOCATIONS.load(Ordering::SeqCst) - before, stats)
        });
        let stats = stats.expect("solves");
        assert!(p.simulator.newton().by_islands() && stats.islands >= 2);
        let now = (
            p.simulator.newton().pattern().clone(),
            problem.nc(),
            stats.islands,
        );
        if seen.as_ref() == Some(&now) {
            assert_eq!(allocations, 0, "step {step} with a known pattern allocated");
            counted += 1;
        }
        seen = Some(now);
        state = p.simulator.step(&state, &u).expect("steps").0;
    }
    assert!(
        counted >= 16,
        "only {counted} steps kept the last one's islands"
    );
}

/// Makes each thread of `pool` (of two) take work from elsewhere once before anything is
/// counted: the job `install` hands in is taken from rayon's queue by one thread, and the
/// second half of a `rayon::join` whose first half waits for it can only be run by the other.
/// A thread's first steal registers it with crossbeam's epoch collector, an allocation made
/// once per thread; without this it falls into whichever counted step first needs both threads.
fn every_thread_steals(pool: &rayon::ThreadPool) {
    pool.install(|| {
        let stolen = AtomicBool::new(false);
        rayon::join(
            || {
                while !stolen.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
            },
            || stolen.store(true, Ordering::Release),
        );
    });
}

/// The block pattern of the simulator's last solve, its number of contacts and of islands:
/// what the whole step's buffers depend on.
type StepPattern = (BlockPattern, usize, usize);

/// Counts the allocations of `steps` steps of `sim` by [`Simulator::step_into`] after
/// `warm_up` steps from `state`, all on a rayon pool of two made for the test (counted are
/// its threads, which run the step and its parallel narrow phase and islands); returns per
/// counted step the allocations and the pattern it left.
fn count_steps(
    sim: &mut Simulator,
    state: &State,
    warm_up: usize,
    steps: usize,
) -> Vec<(usize, StepPattern)> {
    let u = DVector::zeros(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .start_handler(|_| IN_STEP_POOL.with(|c| c.set(true)))
        .build()
        .expect("a pool of two");
    pool.install(|| {
        let (mut state, mut next) = (state.clone(), state.clone());
        let mut report = StepReport::default();
        (0..warm_up + steps)
            .map(|_| {
                let before = STEP_POOL_ALLOCATIONS.load(Ordering::SeqCst);
                STEP_POOL_COUNTING.store(true, Ordering::SeqCst);
                let stepped = sim.step_into(&state, &u, &mut next, &mut report);
                STEP_POOL_COUNTING.store(false, Ordering::SeqCst);
                let allocations = STEP_POOL_ALLOCATIONS.load(Ordering::SeqCst) - before;
                stepped.expect("steps");
                std::mem::swap(&mut state, &mut next);
                let newton = sim.newton();
                let pattern = (
                    newton.pattern().clone(),
                    report.contacts.len(),
                    report.stats.islands,
                );
                (allocations, pattern)
            })
            .skip(warm_up)
            .collect()
    })
}

/// A whole step of a simulator (`Simulator::step_into`: free motion, geometric query, contact
/// assembly, potentials, Newton, position update and report) allocates nothing once it has
/// seen the contact pattern: a step with the block pattern, number of contacts and number of
/// islands of the step before it allocates nothing. The clutter settled in its box (1.6 s,
/// about 150 point contacts, the narrow phase on rayon's threads), solved whole and in
/// islands, and the falling sphere on the ground.
///
/// Counted are the threads of a pool of two made for the test, on which the steps run, the
/// warm-up too: a thread's first steal registers it with crossbeam's epoch collector (an
/// allocation, once), and a step called from outside a rayon pool hands its parallel parts to
/// rayon's global queue (crossbeam's injector), which allocates a block of its queue every 63
/// jobs (rayon's allocations, not the step's). Not claimed: pressure-field contact (each
/// polygon's clipping allocates), SAP's and the regularized Lagged model's Delassus
/// estimates, the candidates SAP and Similar leave out of their problems (their features'
/// boxes dropped and made again) and the constraint rows (joint limits, couplers, servos,
/// friction), which allocate per step.
#[test]
fn whole_step_does_not_allocate_after_a_step_of_its_pattern() {
    let path = |name: &str| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name);
    for (problem, warm_up, islands) in [
        ("problems/clutter.toml", 800, true),
        ("problems/clutter.toml", 800, false),
        ("problems/falling-sphere.toml", 100, true),
    ] {
        let mut p = load_problem(&path(problem)).expect("loads");
        p.simulator.settings.solver.islands = islands;
        let counts = count_steps(&mut p.simulator, &p.initial_state, warm_up, 12);
        let mut counted = 0;
        for (k, pair) in counts.windows(2).enumerate() {
            let ((_, before), (allocations, now)) = (&pair[0], &pair[1]);
            assert!(now.1 > 0, "{problem}: no contacts");
            if k > 0 && before == now {
                assert_eq!(
                    *allocations,
                    0,
                    "{problem}, islands {islands}: step {} of a known pattern allocated",
                    k + 1
                );
                counted += 1;
            }
        }
        assert!(
            counted >= 8,
            "{problem}: only {counted} steps kept their pattern"
        );
    }
}
