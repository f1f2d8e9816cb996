import asyncio, pydantic_monty as m

CODE = '''
import asyncio
x = 5
a = await f(n=1)
try:
    b, c = await asyncio.gather(f(n=2), g(n=3))
except RuntimeError as e:
    b, c = 'err', str(e)
print("after", a, b, c)
[a, b, c, x]
'''
async def fn(**kw): return kw
async def main():
    async with m.AsyncMonty(min_processes=1, max_processes=1) as pool, pool.checkout() as s:
        out=m.CollectString()
        snap = await s.feed_start(CODE, external_lookup={"f": fn, "g": fn}, print_callback=out)
        pending = {}
        dumped=None
        while not isinstance(snap, m.MontyComplete):
            print(type(snap).__name__, getattr(snap,'function_name',None), getattr(snap,'call_id',None), getattr(snap, 'pending_call_ids', None), getattr(snap,'variable_name',None), getattr(snap,'allow_eager_await',None))
            if isinstance(snap, m.AsyncNameLookupSnapshot):
                snap = await snap.resume_auto()
            elif isinstance(snap, m.AsyncFunctionSnapshot):
                if snap.is_os_function:
                    snap = await snap.resume_auto(); continue
                pending[snap.call_id] = (snap.function_name, snap.kwargs)
                snap = await snap.resume({"future": ...})
            else:
                ids = snap.pending_call_ids
                if any(pending[i][0]=="g" for i in ids) and dumped is None:
                    done = {i: {"return_value": pending[i][1]} for i in ids if pending[i][0] != "g"}
                    if done:
                        snap = await snap.resume(done); continue
                    dumped = snap.dump(); print("dumped", len(dumped), [pending[i] for i in ids])
                    break
                snap = await snap.resume({i: {"return_value": pending[i][1]} for i in ids})
        print("out so far", repr(out.output))
    async with m.AsyncMonty(min_processes=1, max_processes=1) as pool, pool.checkout() as s:
        out=m.CollectString()
        snap = await s.load_snapshot(dumped, print_callback=out, external_lookup={"f": fn, "g": fn})
        print("reloaded", type(snap).__name__, snap.pending_call_ids)
        snap = await snap.resume({i: {"exc_type": "RuntimeError", "message": "denied"} for i in snap.pending_call_ids})
        print(type(snap).__name__, snap.output if isinstance(snap, m.MontyComplete) else None, repr(out.output))
        d = await s.dump(); print("session dump", len(d))
asyncio.run(main()); print("END")
