package io.homa.cli;

import io.homa.reactive.HomaException;
import io.homa.reactive.HomaRemoteException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import tools.jackson.core.util.DefaultIndenter;
import tools.jackson.core.util.DefaultPrettyPrinter;
import tools.jackson.core.util.Separators;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code homa}: lists the services of a Homa endpoint and calls their methods with JSON arguments.
 * See {@link ListCommand} and {@link CallCommand}; exit codes in {@link ExitCodes}.
 */
@Command(name = "homa", mixinStandardHelpOptions = true, versionProvider = HomaCli.Version.class,
        subcommands = {ListCommand.class, CallCommand.class, CommandLine.HelpCommand.class},
        description = "Lists the services of a Homa endpoint (through its reflection service homa.reflection)"
                + " and calls their methods with JSON arguments.",
        footerHeading = "%nEnvironment:%n",
        footer = {"  HOMA_PEER  default of --peer (else 127.0.0.1:4000)",
            "  HOMA_KEY   default of --key"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            " 0:the listing or call succeeded",
            " 1:unexpected error (rerun with --verbose for the stack trace)",
            " 2:bad usage: unknown option, bad --peer/--timeout/--key, an argument that is not JSON,"
                    + " wrong number of arguments",
            "64+N:the call ended with status N (gRPC's codes): 67 INVALID_ARGUMENT, 68 DEADLINE_EXCEEDED,"
                    + " 69 NOT_FOUND, 76 UNIMPLEMENTED, 77 INTERNAL, 78 UNAVAILABLE, ..."})
public final class HomaCli implements Runnable {

    /** Reads the arguments and writes the results (JSON, as the server's JSON codec). */
    static final JsonMapper MAPPER = JsonMapper.builder().build();

    /** Indented JSON as jq prints it: {@code "name": value}, one array element per line. */
    static final ObjectWriter PRETTY;

    static {
        DefaultPrettyPrinter printer = new DefaultPrettyPrinter(Separators.createDefaultInstance()
                .withObjectNameValueSpacing(Separators.Spacing.AFTER)
                .withObjectEmptySeparator("")
                .withArrayEmptySeparator(""));
        printer.indentArraysWith(DefaultIndenter.SYSTEM_LINEFEED_INSTANCE);
        PRETTY = MAPPER.writer().with(printer);
    }

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(this.spec.commandLine(), "Missing command: list or call (see homa --help)");
    }

    /** Runs the command and exits with its status. */
    public static void main(String[] args) {
        for (String arg : args) {
            if (arg.equals("-v") || arg.equals("--verbose")) {
                System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "info");
                break;
            }
        }
        System.exit(commandLine().execute(args));
    }

    /**
     * The command, ready to {@link CommandLine#execute execute}: its output goes to
     * {@link CommandLine#getOut()}, errors to {@link CommandLine#getErr()}; an argument that looks
     * like an option but is none (a negative number) is taken as a positional parameter.
     */
    public static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new HomaCli());
        commandLine.setUnmatchedOptionsArePositionalParams(true);
        commandLine.setParameterExceptionHandler((ex, args) -> {
            CommandLine line = ex.getCommandLine();
            PrintWriter err = line.getErr();
            err.println("error: " + ex.getMessage());
            if (!CommandLine.UnmatchedArgumentException.printSuggestions(ex, err)) {
                err.print(line.getHelp().fullSynopsis());
                err.println("Try '" + line.getCommandSpec().qualifiedName() + " --help' for more information.");
            }
            err.flush();
            return ExitCodes.USAGE;
        });
        commandLine.setExecutionExceptionHandler((ex, line, parseResult) -> {
            PrintWriter err = line.getErr();
            err.println("error: " + ex);
            if (verbose(parseResult)) {
                ex.printStackTrace(err);
            }
            err.flush();
            return ExitCodes.SOFTWARE;
        });
        return commandLine;
    }

    private static boolean verbose(CommandLine.ParseResult parseResult) {
        CommandLine.ParseResult command = parseResult;
        while (command.subcommand() != null) {
            command = command.subcommand();
        }
        return command.hasMatchedOption("--verbose");
    }

    /**
     * Prints a failed call as {@code STATUS: message} (the server's message for a remote failure)
     * and returns its exit code.
     */
    static int report(PrintWriter err, HomaException failure, boolean verbose) {
        String message = (failure instanceof HomaRemoteException remote) ? remote.remoteMessage() : failure.getMessage();
        err.println(failure.status() + ": " + message);
        if (verbose) {
            if (failure instanceof HomaRemoteException remote && remote.remoteType() != null) {
                err.println("remote exception: " + remote.remoteType());
            }
            failure.printStackTrace(err);
        }
        err.flush();
        return ExitCodes.of(failure.status());
    }

    /** The version in the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {

        @Override
        public String[] getVersion() {
            String version = HomaCli.class.getPackage().getImplementationVersion();
            return new String[] {"homa " + ((version != null) ? version : "(development build)")};
        }
    }
}
