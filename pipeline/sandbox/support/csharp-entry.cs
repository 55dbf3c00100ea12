// The entry point of every C# program the sandbox compiles (mcs -main:SandboxEntry, languages.ts): a
// failing Debug.Assert or Trace.Assert ends the run with an error, as it does under .NET, where Mono
// would go on; then the program's own Main runs, its exceptions and exit code passed on unchanged.
using System;
using System.Diagnostics;
using System.Reflection;
using System.Runtime.ExceptionServices;
using System.Threading.Tasks;

internal sealed class SandboxFailingAsserts : TraceListener
{
    public override void Write(string message) { }
    public override void WriteLine(string message) { }
    public override void Fail(string message, string detail)
    {
        Console.Out.Flush();
        Console.Error.WriteLine("Process terminated. Assertion failed.");
        if (!string.IsNullOrEmpty(message)) Console.Error.WriteLine(message);
        if (!string.IsNullOrEmpty(detail)) Console.Error.WriteLine(detail);
        Console.Error.WriteLine(new StackTrace(2, true));
        Console.Error.Flush();
        Environment.Exit(134);
    }
}

internal static class SandboxEntry
{
    private static int Main(string[] args)
    {
        Debug.Listeners.Clear();
        Debug.Listeners.Add(new SandboxFailingAsserts());
        MethodInfo main = null;
        foreach (Type type in typeof(SandboxEntry).Assembly.GetTypes())
        {
            if (type == typeof(SandboxEntry)) continue;
            foreach (MethodInfo method in type.GetMethods(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly))
            {
                if (method.Name == "Main" && method.GetParameters().Length <= 1 && !method.IsGenericMethodDefinition) { main = method; break; }
            }
            if (main != null) break;
        }
        if (main == null)
        {
            Console.Error.WriteLine("error: the program has no static Main method");
            return 1;
        }
        object result;
        try
        {
            result = main.Invoke(null, main.GetParameters().Length == 1 ? new object[] { args } : new object[0]);
            if (result is Task) { ((Task)result).GetAwaiter().GetResult(); result = (result is Task<int>) ? (object)((Task<int>)result).Result : null; }
        }
        catch (TargetInvocationException e)
        {
            ExceptionDispatchInfo.Capture(e.InnerException).Throw();
            throw;
        }
        return result is int ? (int)result : 0;
    }
}
