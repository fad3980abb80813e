/** The guard on the JDK's built-in HTTP server ({@code com.sun.net.httpserver}). */
package io.github.resilienthttp.server.jdk;
