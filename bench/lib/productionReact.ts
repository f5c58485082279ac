/**
 * The bench measures React as users ship it: its production build (Vitest runs with
 * NODE_ENV=test, which loads React's development build, several times slower per render).
 * Set in each scenario process before anything loads React; every contender gets the same.
 * `BENCH_REACT=development` measures the development build instead.
 */
if (process.env.BENCH_REACT !== 'development') process.env.NODE_ENV = 'production';
