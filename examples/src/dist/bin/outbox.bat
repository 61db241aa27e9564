@echo off
rem The outbox tool: bin\outbox <command> [options]; bin\outbox --help lists the commands.
rem JAVA_HOME picks the Java runtime (17 or newer; otherwise java on the PATH);
rem JAVA_OPTS adds JVM options, for example set JAVA_OPTS=-Xmx256m.
setlocal
set "OUTBOX_HOME=%~dp0.."
if defined JAVA_HOME (set "JAVA_EXE=%JAVA_HOME%\bin\java.exe") else (set "JAVA_EXE=java")
"%JAVA_EXE%" %JAVA_OPTS% -jar "%OUTBOX_HOME%\lib\outbox.jar" %*
exit /b %ERRORLEVEL%
